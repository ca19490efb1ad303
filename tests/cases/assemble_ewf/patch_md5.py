# patch_md5.py FILE: flips the first byte of the MD5 stored in an EWF1
# segment's hash and digest sections, with their Adler-32 recomputed.
import struct, sys, zlib
f = sys.argv[1]
b = bytearray(open(f, "rb").read())
off, n = 13, 0
while off + 76 <= len(b) and n < 1000:
    typ = bytes(b[off:off + 16]).rstrip(b"\0")
    nxt, size = struct.unpack_from("<QQ", b, off + 16)
    d = off + 76
    if typ == b"hash" and d + 36 <= len(b):
        b[d] ^= 0xff
        struct.pack_into("<I", b, d + 32, zlib.adler32(bytes(b[d:d + 32])))
        n += 100
    if typ == b"digest" and d + 80 <= len(b):
        b[d] ^= 0xff
        struct.pack_into("<I", b, d + 76, zlib.adler32(bytes(b[d:d + 76])))
        n += 100
    if nxt <= off:
        break
    off = nxt
    n += 1
open(f, "wb").write(b)
print("patched" if n >= 100 else "no hash section")
