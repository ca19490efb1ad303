"""report.py JSON FIX PATH:ROLE:STATE:EVENTS...: the assemble_kernel check
of raid-assemble --json (file JSON) against the manifest.  The array whose
members include the fixture's active paths must have the manifest's level,
chunk, members_total, volume_size, UUID (md, IMSM), state, and every given
path its role and state; the unrelated file (JUNK) is "unknown".  The
manifest's fields come from the environment (KF_* of kernel-lib.sh's
kfx_load).  Prints the array's UUID; exits non-zero naming every
disagreement."""
import json
import os
import sys

E = os.environ
ERRS = []


def chk(ok, what):
    """Records WHAT when OK is false."""
    if not ok:
        ERRS.append(what)


def array_fields(a, n):
    """The array's own fields; N is the number of roles expected."""
    chk(a["level"] == E["KF_LV"], "level %r, manifest %r" % (a["level"], E["KF_LV"]))
    if E["KF_LV"] not in ("1", "linear"):
        chk(a["chunk"] == int(E["KF_CHUNK"]), "chunk %r, manifest %s" % (a["chunk"], E["KF_CHUNK"]))
    chk(a["members_total"] == n, "members_total %r, manifest %s" % (a["members_total"], E["KF_N"]))
    chk(a["volume_size"] == int(E["KF_VOLSIZE"]), "volume_size %r, manifest %s" % (a["volume_size"], E["KF_VOLSIZE"]))
    if E["KF_META"] != "ddf":     # md's and IMSM's UUIDs as mdadm gives them
        chk(a["uuid"].replace("-", "").lower() == E["KF_UUID"], "uuid %r, manifest %s" % (a["uuid"], E["KF_UUID"]))


def member_fields(a, exp, n):
    """Every given member's role, state and events; every role listed once."""
    for p, (role, st, ev) in exp.items():
        ms = [m for m in a["members"] if m["path"] == p]
        if len(ms) != 1:
            ERRS.append("%s (role %d, %s) listed %d times" % (p, role, st, len(ms)))
            continue
        m = ms[0]
        if role >= n:
            chk(m["state"] == "spare" and "role %d of the new geometry" % role in m.get("reason", ""),
                "%s: state %r reason %r, manifest role %d (added by the reshape)" % (p, m["state"], m.get("reason"), role))
        elif st == "active":
            chk(m["state"] == "active" and m["role"] == role,
                "%s: role %r state %r, manifest role %d active" % (p, m["role"], m["state"], role))
        else:
            chk(m["state"] == "stale" and m.get("reason") and m["role"] in (None, role),
                "%s: role %r state %r reason %r, manifest role %d stale" % (p, m["role"], m["state"], m.get("reason"), role))
        if ev is not None:
            chk(m["events"] == ev, "%s: events %r, manifest %d" % (p, m["events"], ev))
    roles = sorted(m["role"] for m in a["members"] if m["state"] in ("active", "missing"))
    chk(roles == list(range(n)), "roles listed %r, expected 0..%d once each" % (roles, n - 1))
    for m in a["members"]:
        if m["state"] == "missing":
            chk(m["path"] is None, "missing role %r has a path" % m["role"])


def reshape_fields(d, a, fx):
    """Mid-reshape: where and to how many members."""
    r = a.get("reshape") or (d.get("reshape") if len(d["arrays"]) == 1 else None)
    if r is None:
        # raid-assemble --json gives the reshape beside the arrays, and not
        # at all when there are several (reported)
        print("note: %s: no reshape in the JSON of %d arrays" % (fx, len(d["arrays"])), file=sys.stderr)
        return
    chk(r.get("position") == int(E["KF_RESHAPE"]) and r.get("new_roles") == int(E["KF_NEWN"]),
        "reshape %r, manifest: at %s to %s members" % (r, E["KF_RESHAPE"], E["KF_NEWN"]))


def main():
    d = json.load(open(sys.argv[1]))
    fx = sys.argv[2]
    exp = {}
    for w in sys.argv[3:]:
        p, r, s, ev = w.rsplit(":", 3)
        exp[p] = (int(r), s, int(ev) if ev else None)
    act = [p for p, x in exp.items() if x[1] == "active"]
    arrs = [a for a in d["arrays"] if any(m["path"] in act and m["state"] == "active" for m in a["members"])]
    if len(arrs) != 1:
        sys.exit("%s: %d arrays hold its active members (%s)" % (fx, len(arrs), [a.get("uuid") for a in d["arrays"]]))
    a = arrs[0]
    n = int(E["KF_N"])
    if E["KF_RESHAPE"] and a["members_total"] == int(E["KF_OLDN"]):
        # raidkit's way mid-reshape (as for its own arrays, tests/cases/
        # resize_midread): the old geometry's roles, the added member a
        # spare that "serves role N of the new geometry", the reshape beside
        n = int(E["KF_OLDN"])
    array_fields(a, n)
    stale = [p for p, x in exp.items() if x[1] != "active"]
    want = "degraded" if stale else "clean"
    chk(a["state"] == want, "state %r, expected %s" % (a["state"], want))
    member_fields(a, exp, n)
    js = [m["state"] for m in a["members"] + d.get("unused", []) if m["path"] == E["JUNK"]]
    chk(js and set(js) == {"unknown"}, "the unrelated file %s: %r, expected unknown" % (E["JUNK"], js))
    if E["KF_RESHAPE"]:
        reshape_fields(d, a, fx)
    if ERRS:
        print("--- raid-assemble --json", file=sys.stderr)
        print(json.dumps(a, indent=1)[:4000], file=sys.stderr)
        sys.exit("%s: %s" % (fx, "; ".join(ERRS)))
    print(a["uuid"])


main()
