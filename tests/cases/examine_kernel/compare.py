"""compare.py FIX META LAYOUT_CODE RESHAPE PATH...: the examine_kernel
check of one fixture.  raid-examine's JSON (rx.json, members in PATH
order) against mdadm --examine PATH... (xall.txt; each member's part
starts with a line "PATH:"), or for IMSM the fixture's examine.txt (cut at
"# ---- mN.img.xz").  KF_UUID in the environment: the manifest's array
UUID.  Prints "ok [note]" or "skip: why"; exits non-zero naming every
disagreement."""
import json
import os
import re
import sys

ERRS = []          # disagreements, in words
NOT_SHOWN = set()  # fields raid-examine does not show (yet)


def chk(ok, what):
    """Records WHAT when OK is false."""
    if not ok:
        ERRS.append(what)


def hexid(s):
    """A UUID or GUID as its hex digits, lower case."""
    return re.sub(r"[^0-9a-f]", "", str(s).lower())


def mdadm_parts(paths):
    """xall.txt cut per member: {path: [lines]}."""
    parts, cur = {}, None
    for line in open("xall.txt"):
        s = line.rstrip("\n")
        if s.endswith(":") and s[:-1] in paths:
            cur = s[:-1]
            parts[cur] = []
        elif cur is not None:
            parts[cur].append(line)
    return parts


def fields(lines):
    """mdadm's 'Key : value' lines (the first of each key), and md 0.90's
    'this' line split in words (or None)."""
    m, this = {}, None
    for line in lines:
        k, sep, v = line.partition(" : ")
        if sep and k.strip() not in m:
            m[k.strip()] = v.strip()
        if sep and re.fullmatch(r"Disk\d+ Serial", k.strip()) and "this serial" not in m:
            m["this serial"] = v.strip()
        if line.startswith("this "):
            this = line.split()
    return m, this


def md_basic(p, f, m, layout_code):
    """The fields every md superblock has."""
    uuid = m.get("Array UUID") or m.get("UUID")
    chk(hexid(f["array_uuid"]) == hexid(uuid), "%s: uuid %r, mdadm %r" % (p, f["array_uuid"], uuid))
    chk(f["version"] == m["Version"], "%s: version %r, mdadm %r" % (p, f["version"], m["Version"]))
    chk(f["level"] == m["Raid Level"], "%s: level %r, mdadm %r" % (p, f["level"], m["Raid Level"]))
    chk(str(f["raid_disks"]) == m["Raid Devices"], "%s: raid_disks %r, mdadm %r" % (p, f["raid_disks"], m["Raid Devices"]))
    chk(str(f["events"]) == m["Events"], "%s: events %r, mdadm %r" % (p, f["events"], m["Events"]))
    cs = m["Checksum"].split()
    chk(int(cs[0], 16) == f["checksum"] and (cs[-1] == "correct") == bool(f["checksum_ok"]),
        "%s: checksum %r ok %r, mdadm %r" % (p, f["checksum"], f["checksum_ok"], m["Checksum"]))
    if "Chunk Size" in m:
        chk(f["chunk"] == int(m["Chunk Size"].rstrip("K")) * 1024, "%s: chunk %r, mdadm %r" % (p, f["chunk"], m["Chunk Size"]))
    if "Layout" in m:
        chk(f["layout"] == layout_code, "%s: layout %r, mdadm %r (md number %d)" % (p, f["layout"], m["Layout"], layout_code))
    if "Name" in m:
        chk(f["name"] == m["Name"], "%s: name %r, mdadm %r" % (p, f["name"], m["Name"]))


def md_device(p, f, m, this):
    """This member's own fields: offsets, role, state."""
    sectors = lambda k: int(m[k].split()[0]) * 512
    pairs = (("Data Offset", "data_offset"), ("Super Offset", "super_offset"), ("Avail Dev Size", "data_size"))
    for k, j in pairs:
        if k in m and j in f:
            chk(f[j] == sectors(k), "%s: %s %r, mdadm %s %r" % (p, j, f[j], k, m[k]))
    # Used Dev Size where it differs from Avail Dev Size; neither for RAID-0
    # and linear (md keeps 0 there)
    if "used_size" in f and ("Used Dev Size" in m or ("Avail Dev Size" in m and f.get("level_number", 0) > 0)):
        k = "Used Dev Size" if "Used Dev Size" in m else "Avail Dev Size"
        unit = 1024 if this else 512     # 0.90 gives KiB, 1.x sectors
        chk(f["used_size"] == int(m[k].split()[0]) * unit, "%s: used_size %r, mdadm %s %r" % (p, f["used_size"], k, m[k]))
    if "Feature Map" in m and "feature_map" in f:
        chk(f["feature_map"] == int(m["Feature Map"], 16), "%s: feature_map %r, mdadm %r" % (p, f["feature_map"], m["Feature Map"]))
    if "Device UUID" in m:
        chk(hexid(f["device_uuid"]) == hexid(m["Device UUID"]), "%s: device_uuid %r, mdadm %r" % (p, f["device_uuid"], m["Device UUID"]))
    if "Device Role" in m:
        chk(f["device_role"] == m["Device Role"], "%s: device_role %r, mdadm %r" % (p, f["device_role"], m["Device Role"]))
    if "Array State" in m:
        chk(m["Array State"].startswith(str(f["array_state"]) + " "), "%s: array_state %r, mdadm %r" % (p, f["array_state"], m["Array State"]))
    if "State" in m and "clean" in f and m["State"] in ("clean", "active"):
        chk(f["clean"] == (m["State"] == "clean"), "%s: clean %r, mdadm State %r" % (p, f["clean"], m["State"]))
    if "Bad Block Log" in m and "bad_block_log_entries" in f:
        chk(f["bad_block_log_entries"] == int(m["Bad Block Log"].split()[0]),
            "%s: bad_block_log_entries %r, mdadm %r" % (p, f["bad_block_log_entries"], m["Bad Block Log"]))
    if this:    # md 0.90: "this NUMBER MAJOR MINOR RAIDDEVICE STATE..."
        words = " ".join(w for w in this[5:] if not w.startswith("/"))
        chk(f["role"] == int(this[4]), "%s: role %r, mdadm's this line %r" % (p, f["role"], " ".join(this)))
        chk(f.get("device_state", words) == words, "%s: device_state %r, mdadm %r" % (p, f.get("device_state"), words))


def md_reshape(p, f, m, reshape):
    """The reshape fields, against mdadm and the manifest."""
    r = f.get("reshape")
    if "Reshape pos'n" not in m:
        chk(not isinstance(r, dict), "%s: raid-examine shows a reshape mdadm does not: %r" % (p, r))
        return
    kib = int(m["Reshape pos'n"].split()[0])
    chk(int(reshape or -1) == kib * 1024, "%s: mdadm's reshape position %d KiB is not the manifest's %s" % (p, kib, reshape))
    if not isinstance(r, dict):
        NOT_SHOWN.add("reshape")
        return
    chk(r.get("position") == kib * 1024, "%s: reshape position %r, mdadm %d KiB" % (p, r.get("position"), kib))
    new = int(m["New Offset"].split()[0]) * 512
    chk(r.get("new_offset") == new, "%s: reshape new_offset %r, mdadm %r" % (p, r.get("new_offset"), m["New Offset"]))
    chk(str(r.get("delta_disks")) == m["Delta Devices"].split()[0],
        "%s: reshape delta_disks %r, mdadm %r" % (p, r.get("delta_disks"), m["Delta Devices"]))


def walk(o):
    """Every (key, value) in a nested JSON value."""
    if isinstance(o, dict):
        for k, v in o.items():
            yield k, v
            yield from walk(v)
    elif isinstance(o, list):
        for v in o:
            yield from walk(v)


def loose(i, f, want):
    """DDF/IMSM: each concept (wanted value, candidate keys, normaliser) is
    compared where raid-examine shows one of its keys (any of them equal
    passes); returns how many were shown."""
    pairs = list(walk(f))
    shown = 0
    for what, (val, keys, norm) in want.items():
        got = [v for k, v in pairs if k in keys and not isinstance(v, (dict, list))]
        if not got:
            NOT_SHOWN.add(what)
            continue
        shown += 1
        chk(any(norm(g) == norm(val) for g in got), "file %d: %s %r, mdadm %r" % (i, what, got, val))
    return shown


def lvl(s):
    return re.sub(r"^raid", "", str(s).lower().replace("-", ""))


def num(s):
    return int(str(s), 0) if re.fullmatch(r"(0x)?[0-9a-f]+", str(s).lower()) else str(s)


def ddf_member(i, f, m):
    """A DDF member against mdadm --examine (first virtual disk); mdadm's
    fields it lacks (no chunk for RAID-1) are not compared."""
    g = lambda k, conv: conv(m[k]) if k in m else None
    chunk = g("Chunk Size[0]", lambda v: int(v.split()[0]))
    want = {
        "container guid": (g("Container GUID", str), {"container_guid"}, hexid),
        "vd guid": (g("VD GUID[0]", str), {"vd_guid", "guid", "volume_guid"}, hexid),
        "sequence": (g("Seq", lambda v: int(v, 16)), {"seq", "sequence", "seq_num", "seqnum", "sequence_number"}, num),
        # mdadm names the primary level (RAID1 for a RAID-10's legs)
        "level": (g("Raid Level[0]", str), {"level", "raid_level", "raid_level_ddf"}, lvl),
        "raid devices": (g("Raid Devices[0]", lambda v: int(v.split()[0])),
                         {"raid_disks", "primary_element_count", "prim_elmnt_count"}, num),
        "chunk": (chunk * 512 if chunk else None, {"chunk", "chunk_size", "stripe_size"}, num),
        "chunk sectors": (chunk, {"chunk_sectors"}, num),
        "name": (g("Name[0]", str), {"name", "vd_name"}, str),
    }
    return loose(i, f, {k: v for k, v in want.items() if v[0] is not None})


def imsm_sections(nfiles):
    """examine.txt cut per member file, in file order: [(fields, this)]."""
    parts = re.split(r"^# ---- m(\d+)\.img\.xz\n", open("examine.txt").read(), flags=re.M)
    out = {int(parts[k]): fields(parts[k + 1].splitlines()) for k in range(1, len(parts), 2)}
    return [out[k] for k in range(nfiles)]


def imsm_member(i, f, m):
    """An IMSM member against mdadm's examine.txt (first volume)."""
    want = {
        "container uuid": (m["UUID"], {"uuid"}, hexid),
        "volume uuid": (os.environ["KF_UUID"], {"uuid"}, hexid),
        "family": (int(m["Family"], 16), {"family", "family_num", "family_number"}, num),
        "generation": (int(m["Generation"], 16), {"generation", "generation_num", "events"}, num),
        "level": (m["RAID Level"], {"level", "raid_level"}, lvl),
        "members": (int(m["Members"]), {"num_members", "members", "raid_disks"}, num),
        "this slot": (int(m["This Slot"]), {"this_slot", "slot", "role"}, num),
        "chunk": (int(m["Chunk Size"].split()[0]) * 1024, {"chunk", "chunk_size"}, num),
        "volume size": (int(m["Array Size"].split()[0]) * 512, {"volume_size", "array_size", "size"}, num),
    }
    shown = loose(i, f, want)
    # this disk (told by its serial): the header's first "DiskNN Serial"
    me = [x for x in f.get("disks", []) if isinstance(x, dict) and x.get("this_disk")]
    if "this serial" in m:
        chk(len(me) == 1 and me[0].get("serial") == m["this serial"],
            "file %d: this disk %r, mdadm's serial %r" % (i, me, m["this serial"]))
    return shown


def main():
    fx, meta, layout_code, reshape = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    paths = sys.argv[5:]
    members = json.load(open("rx.json"))["members"]
    chk(len(members) == len(paths), "raid-examine listed %d members of %d" % (len(members), len(paths)))
    fam = meta if meta in ("ddf", "imsm") else "md"
    parts = mdadm_parts(paths) if fam != "imsm" else None
    secs = imsm_sections(len(paths)) if fam == "imsm" else None
    shown = 0
    for i, mem in enumerate(members):
        fm = [f for f in (mem.get("foreign_metadata") or []) if str(f.get("format", "")).lower().startswith(fam)]
        if not fm and fam != "md":
            print("skip: raid-examine --json shows no %s fields yet" % meta.upper())
            return
        if not fm:
            ERRS.append("file %d: no md entry in foreign_metadata" % i)
        elif fam == "md":
            m, this = fields(parts.get(paths[i], []))
            p = "file %d" % i
            md_basic(p, fm[0], m, layout_code)
            md_device(p, fm[0], m, this)
            md_reshape(p, fm[0], m, reshape)
        elif fam == "ddf":
            shown += ddf_member(i, fm[0], fields(parts.get(paths[i], []))[0])
        else:
            shown += imsm_member(i, fm[0], secs[i][0])
    if ERRS:
        sys.exit("%s: raid-examine disagrees with mdadm --examine:\n  %s" % (fx, "\n  ".join(ERRS)))
    if fam != "md" and not shown:
        print("skip: raid-examine --json has a %s entry but none of the fields compared (%s)"
              % (meta.upper(), ", ".join(sorted(NOT_SHOWN))))
        return
    print("ok" + (" (not shown by raid-examine: %s)" % ", ".join(sorted(NOT_SHOWN)) if NOT_SHOWN else ""))


main()
