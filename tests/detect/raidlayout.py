"""raidlayout.py: an independent writer of Linux md's array layouts, for the
detect corpus (issue 16).  It shares no code with raidkit's engine/ or
libmeta/: it was written from md's raid5_compute_sector(), raid6_d0(),
raid6_idx_to_slot() and raid10's __raid10_find_phys() / calc_sectors() as
documented in spec/layouts.md, and is checked against raidkit's mkraid and
the real md driver's arrays by tests/cases/detect_generator.

Levels are the words "linear", "0", "1", "4", "5", "6", "10"; layouts are
raidkit's names (engine/geom_names.c): "none", "parity-last",
"left-asymmetric" ... "parity-first-6", "ddf-zero-restart" ..., "n2", "f3",
"o2", "n2f2".  Parity and Q are computed on Python integers (one integer per
chunk, little-endian), so no numpy is needed.
"""
import os

R56 = ["left-asymmetric", "right-asymmetric", "left-symmetric",
       "right-symmetric", "parity-first", "parity-last"]
R6_DDF = {"ddf-zero-restart": 8, "ddf-N-restart": 9, "ddf-N-continue": 10}
R6_6 = {"left-asymmetric-6": 16, "right-asymmetric-6": 17,
        "left-symmetric-6": 18, "right-symmetric-6": 19, "parity-first-6": 20}
LEVEL_MIN = {"linear": 2, "0": 2, "1": 2, "4": 3, "5": 3, "6": 4, "10": 2}


def layout_code(level, name):
    """md's layout number for raidkit's layout NAME at LEVEL (ValueError if
    the level has no such layout)."""
    if level in ("linear", "0", "1"):
        if name == "none":
            return 0
    elif level == "4":
        if name == "parity-last":
            return 5
    elif level in ("5", "6") and name in R56:
        return R56.index(name)
    elif level == "6" and name in R6_DDF:
        return R6_DDF[name]
    elif level == "6" and name in R6_6:
        return R6_6[name]
    elif level == "10":
        near, far, off = r10_parse(name)
        return near | (far << 8) | (off << 16)
    raise ValueError("no layout %s for level %s" % (name, level))


def r10_parse(name):
    """(near, far, offset) of "n2", "f3", "o2", "n2f2", "n2o2"."""
    near, far, off, i = 1, 1, 0, 0
    while i < len(name):
        c = name[i]
        j = i + 1
        while j < len(name) and name[j].isdigit():
            j += 1
        if c not in "nfo" or j == i + 1:
            raise ValueError("bad RAID-10 layout " + name)
        v = int(name[i + 1:j])
        if c == "n":
            near = v
        else:
            far, off = v, int(c == "o")
        i = j
    if near * far < 2:
        raise ValueError("bad RAID-10 layout " + name)
    return near, far, off


def parity_roles(level, code, n, stripe):
    """For RAID-4/5/6 stripe STRIPE over N roles: (pd, qd, data) where data
    lists the role of each data block in volume order and qd is None for
    RAID-4/5 (md's raid5_compute_sector)."""
    if level in ("4", "5"):
        k = n - 1
        if level == "4" or code == 5:
            return k, None, list(range(k))
        if code == 4:
            return 0, None, [i + 1 for i in range(k)]
        pd = k - stripe % n if code in (0, 2) else stripe % n
        if code in (0, 1):
            return pd, None, [i if i < pd else i + 1 for i in range(k)]
        return pd, None, [(pd + 1 + i) % n for i in range(k)]
    k = n - 2
    if code in (0, 1, 8, 9):
        if code == 0:
            pd = n - 1 - stripe % n
        elif code == 9:
            pd = n - 1 - (stripe + 1) % n
        else:
            pd = stripe % n
        if pd == n - 1:
            return pd, 0, [i + 1 for i in range(k)]
        return pd, pd + 1, [i if i < pd else i + 2 for i in range(k)]
    if code in (2, 3):
        pd = n - 1 - stripe % n if code == 2 else stripe % n
        return pd, (pd + 1) % n, [(pd + 2 + i) % n for i in range(k)]
    if code == 4:
        return 0, 1, [i + 2 for i in range(k)]
    if code == 5:
        return k, k + 1, list(range(k))
    if code == 10:
        pd = n - 1 - stripe % n
        return pd, (pd + n - 1) % n, [(pd + 1 + i) % n for i in range(k)]
    if code in (16, 17, 18, 19):
        m = stripe % (n - 1)
        pd = k - m if code in (16, 18) else m
        if code in (16, 17):
            return pd, n - 1, [i if i < pd else i + 1 for i in range(k)]
        return pd, n - 1, [(pd + 1 + i) % (n - 1) for i in range(k)]
    if code == 20:
        return 0, n - 1, [i + 1 for i in range(k)]
    raise ValueError("RAID-6 layout %d" % code)


def q_slots(code, n, pd, qd):
    """Role -> Q coefficient exponent (slot) for the data roles of a RAID-6
    stripe (md's raid6_d0 and raid6_idx_to_slot): DDF layouts (8-10) use
    the role number; md's walk cyclically from the role after Q."""
    if code in (8, 9, 10):
        return {r: r for r in range(n) if r not in (pd, qd)}
    d0 = 0 if qd == n - 1 else qd + 1
    slots, j = {}, 0
    for t in range(n):
        r = (d0 + t) % n
        if r in (pd, qd):
            continue
        slots[r] = j
        j += 1
    return slots


def r10_geometry(near, far, off, n, member_chunks):
    """(volume chunks, stride in chunks) of md RAID-10 with MEMBER_CHUNKS
    chunks per member (md's calc_sectors)."""
    vchunks = (member_chunks // far) * n // near
    used = -(-vchunks * near * far // n)
    stride = 1 if off else used // far
    return vchunks, stride


def r10_copies(near, far, off, n, stride, m):
    """[(role, member chunk)] of every copy of volume chunk M, md's order."""
    x = m * near
    out = []
    dev, row = x % n, x // n
    if off:
        row *= far
    for _ in range(near):
        out.append((dev, row))
        d, s = dev, row
        for _f in range(1, far):
            d = (d + near) % n
            s += stride
            out.append((d, s))
        dev += 1
        if dev >= n:
            dev, row = 0, row + (far if off else 1)
    return out


def volume_size(level, layout, n, chunk, data_size):
    """Volume bytes of N members of DATA_SIZE bytes each (data areas)."""
    if level == "linear":
        return n * data_size
    if level == "1":
        return data_size
    rows = data_size // chunk
    if level == "0":
        return n * rows * chunk
    if level in ("4", "5"):
        return (n - 1) * rows * chunk
    if level == "6":
        return (n - 2) * rows * chunk
    near, far, off = r10_parse(layout)
    return r10_geometry(near, far, off, n, rows)[0] * chunk


def data_size_for(level, layout, n, chunk, need):
    """Smallest per-member data size (a whole number of chunks; 4 KiB for
    linear and RAID-1) whose volume holds NEED bytes."""
    unit = 4096 if level in ("linear", "1") else chunk
    if level == "linear":
        per = -(-need // n)
    elif level == "1":
        per = need
    elif level == "0":
        per = -(-need // n)
    elif level in ("4", "5"):
        per = -(-need // (n - 1))
    elif level == "6":
        per = -(-need // (n - 2))
    else:
        near, far, off = r10_parse(layout)
        per = -(-need * near // n) * far
    ds = max(unit, -(-per // unit) * unit)
    while volume_size(level, layout, n, chunk, ds) < need:
        ds += unit
    return ds


def data_extents(fd, start, end):
    """(start, end) byte ranges of fd within [start, end) that may hold
    data (SEEK_DATA/SEEK_HOLE; the whole range where unsupported)."""
    pos = start
    while pos < end:
        try:
            d = os.lseek(fd, pos, os.SEEK_DATA)
        except OSError:
            return
        if d >= end:
            return
        try:
            h = os.lseek(fd, d, os.SEEK_HOLE)
        except OSError:
            h = end
        yield d, min(h, end)
        pos = h


def units_with_data(fd, vsize, unit):
    """Indices of the UNIT-sized pieces of the volume fd that hold data."""
    last = -1
    for s, e in data_extents(fd, 0, vsize):
        first = max(s // unit, last + 1)
        for i in range(first, (e - 1) // unit + 1):
            yield i
            last = i


class Writer:
    """Writes a volume's bytes as md's members: outs[role] is an open fd or
    None (a missing role), offs[role] the data offset on it."""

    def __init__(self, level, layout, n, chunk, data_sizes, outs, offs):
        self.level, self.layout, self.n, self.chunk = level, layout, n, chunk
        self.ds, self.outs, self.offs = data_sizes, outs, offs
        self.code = layout_code(level, layout)
        self.zero = bytes(chunk) if chunk else b""

    def put(self, role, moff, buf):
        """Writes BUF at data-area offset MOFF of ROLE (skips zeros: the
        member files are sparse and start zero over their data areas)."""
        fd = self.outs[role]
        if fd is None or not buf.strip(b"\0"):
            return
        os.pwrite(fd, buf, self.offs[role] + moff)

    def write(self, vfd, vsize):
        """Lays the volume out (only the parts holding data are visited)."""
        lv = self.level
        if lv == "linear":
            return self._linear(vfd, vsize)
        if lv == "1":
            for s, e in data_extents(vfd, 0, vsize):
                for p in range(s, e, 1 << 20):
                    b = os.pread(vfd, min(1 << 20, e - p), p)
                    for r in range(self.n):
                        self.put(r, p, b)
            return
        if lv in ("4", "5", "6"):
            return self._parity(vfd, vsize)
        c = self.chunk
        if lv == "0":
            for m in units_with_data(vfd, vsize, c):
                self.put(m % self.n, (m // self.n) * c, os.pread(vfd, c, m * c))
            return
        near, far, off = r10_parse(self.layout)
        _, stride = r10_geometry(near, far, off, self.n, self.ds[0] // c)
        for m in units_with_data(vfd, vsize, c):
            b = os.pread(vfd, c, m * c)
            for role, row in r10_copies(near, far, off, self.n, stride, m):
                self.put(role, row * c, b)

    def _linear(self, vfd, vsize):
        base = 0
        for r in range(self.n):
            for s, e in data_extents(vfd, base, base + self.ds[r]):
                for p in range(s, e, 1 << 20):
                    ln = min(1 << 20, e - p)
                    self.put(r, p - base, os.pread(vfd, ln, p))
            base += self.ds[r]

    def _parity(self, vfd, vsize):
        c, n = self.chunk, self.n
        k = n - 1 if self.level in ("4", "5") else n - 2
        m7 = int.from_bytes(b"\x7f" * c, "little")
        m1 = int.from_bytes(b"\x01" * c, "little")
        for s in units_with_data(vfd, vsize, k * c):
            row = os.pread(vfd, k * c, s * k * c)
            if not row.strip(b"\0"):
                continue
            pd, qd, data = parity_roles(self.level, self.code, n, s)
            blocks = {}
            p = 0
            for i, role in enumerate(data):
                b = row[i * c:(i + 1) * c]
                self.put(role, s * c, b)
                v = int.from_bytes(b, "little")
                blocks[role] = v
                p ^= v
            self.put(pd, s * c, p.to_bytes(c, "little"))
            if qd is None:
                continue
            slots = q_slots(self.code, n, pd, qd)
            by_slot = {j: blocks[r] for r, j in slots.items()}
            q = 0
            for j in range(max(slots.values()), -1, -1):
                q = ((q & m7) << 1) ^ (((q >> 7) & m1) * 0x1d)
                q ^= by_slot.get(j, 0)
            self.put(qd, s * c, q.to_bytes(c, "little"))


# ---------------------------------------------------------------- reading
# The inverse, for tests/detect/oracle (the scorer's self-test): reads the
# volume back from members, rebuilding missing ones from P and Q.

def gf_mul_int(x, c, m7, m1):
    """The chunk-integer X (bytes little-endian) times the GF(2^8) constant C."""
    out = 0
    while c:
        if c & 1:
            out ^= x
        c >>= 1
        x = ((x & m7) << 1) ^ (((x >> 7) & m1) * 0x1d)
    return out


def gf_scalar_tables():
    """(exp, log) tables of GF(2^8) with polynomial 0x11d, generator 2."""
    exp, log = [0] * 512, [0] * 256
    v = 1
    for i in range(255):
        exp[i] = v
        log[v] = i
        v <<= 1
        if v & 0x100:
            v ^= 0x11d
    for i in range(255, 512):
        exp[i] = exp[i - 255]
    return exp, log


class Reader:
    """Reads volume chunks from members: ins[role] an fd or None."""

    def __init__(self, level, layout, n, chunk, data_size, ins, offs):
        self.level, self.layout, self.n, self.chunk = level, layout, n, chunk
        self.ds, self.ins, self.offs = data_size, ins, offs
        self.code = layout_code(level, layout)
        c = chunk or 4096
        self.m7 = int.from_bytes(b"\x7f" * c, "little")
        self.m1 = int.from_bytes(b"\x01" * c, "little")
        self.exp, self.log = gf_scalar_tables()

    def get(self, role, moff, ln):
        """LN bytes at data-area offset MOFF of ROLE, None if it is missing."""
        fd = self.ins[role]
        if fd is None:
            return None
        b = os.pread(fd, ln, self.offs[role] + moff)
        return b + bytes(ln - len(b))

    def read_all(self, out_fd, vsize):
        """Writes the whole volume to OUT_FD; False if it cannot be read."""
        lv, c, n = self.level, self.chunk, self.n
        if lv == "linear":
            base = 0
            for r in range(n):
                for p in range(0, self.ds, 1 << 20):
                    b = self.get(r, p, min(1 << 20, self.ds - p))
                    if b is None:
                        return False
                    os.pwrite(out_fd, b, base + p)
                base += self.ds
            return True
        if lv == "1":
            r = next((r for r in range(n) if self.ins[r] is not None), None)
            if r is None:
                return False
            for p in range(0, vsize, 1 << 20):
                os.pwrite(out_fd, self.get(r, p, min(1 << 20, vsize - p)), p)
            return True
        if lv in ("4", "5", "6"):
            return self._parity(out_fd, vsize)
        stride = None
        if lv == "10":
            near, far, off = r10_parse(self.layout)
            stride = r10_geometry(near, far, off, n, self.ds // c)[1]
        for m in range(vsize // c):
            if lv == "0":
                b = self.get(m % n, (m // n) * c, c)
            else:
                b = next((self.get(r, row * c, c) for r, row in
                          r10_copies(near, far, off, n, stride, m) if self.ins[r] is not None), None)
            if b is None:
                return False
            os.pwrite(out_fd, b, m * c)
        return True

    def _parity(self, out_fd, vsize):
        c, n = self.chunk, self.n
        k = n - 1 if self.level in ("4", "5") else n - 2
        for s in range(vsize // (k * c)):
            pd, qd, data = parity_roles(self.level, self.code, n, s)
            blk = {r: self.get(r, s * c, c) for r in data + [pd] + ([qd] if qd is not None else [])}
            val = {r: int.from_bytes(b, "little") for r, b in blk.items() if b is not None}
            lost = [r for r in data if r not in val]
            if lost and not self._rebuild(val, lost, pd, qd):
                return False
            row = b"".join(val[r].to_bytes(c, "little") for r in data)
            if row.strip(b"\0"):
                os.pwrite(out_fd, row, s * k * c)
        return True

    def _rebuild(self, val, lost, pd, qd):
        """Fills VAL[r] for the LOST data roles from P and Q; False if it
        cannot."""
        px = 0
        for r, v in val.items():
            if r != qd:
                px ^= v          # P xor the data present (P itself included)
        if len(lost) == 1 and pd in val:
            val[lost[0]] = px
            return True
        if qd is None or qd not in val:
            return False
        slots = q_slots(self.code, self.n, pd, qd)
        qx = val[qd]
        for r, j in slots.items():
            if r in val:
                qx ^= gf_mul_int(val[r], self.exp[j], self.m7, self.m1)
        exp, log = self.exp, self.log
        if len(lost) == 1:        # P gone too: D = Q' / g^x
            x = slots[lost[0]]
            val[lost[0]] = gf_mul_int(qx, exp[(255 - x) % 255], self.m7, self.m1)
            return True
        if pd not in val:
            return False
        a, b = lost
        xa, xb = slots[a], slots[b]
        # D_a ^ D_b = P', g^xa D_a ^ g^xb D_b = Q'
        denom = exp[xa] ^ exp[xb]
        inv = exp[(255 - log[denom]) % 255]
        da = gf_mul_int(qx ^ gf_mul_int(px, exp[xb], self.m7, self.m1), inv, self.m7, self.m1)
        val[a], val[b] = da, da ^ px
        return True
