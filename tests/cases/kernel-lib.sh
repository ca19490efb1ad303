# kernel-lib.sh: helpers of the cases over tests/fixtures/kernel/ (arrays
# the real Linux md driver made: md 0.90/1.x, DDF, IMSM; see the README
# there).  Sourced after the tool's NAME-lib.sh (which brings lib.sh); not a
# case itself.  Members are unpacked with xz -T1 into the case's temporary
# folder (a fresh kfx.work for each fixture) under random names and deleted
# when done with a fixture.
#
# Environment: RK_KERNEL_FIXTURES (the fixtures folder), RK_KFX (a comma
# list of fixture names or globs: only those), RK_KFX_ALL=1 (every fixture
# even under sanitizers), RK_KFX_SUBSET=1 (the sanitizer subset in a plain
# build too), RK_SEED (replay the random names, orders and
# choices a failing run printed).  SAN=1 (as make check passes it) or
# sanitizer-instrumented tools: a representative subset, one fixture per
# format and level.

KFX=${RK_KERNEL_FIXTURES:-$TOP/tests/fixtures/kernel}

# kfx_need: skip (exit 77) unless the fixtures, xz, python3 and sha256sum
# are there.
kfx_need() {
	need_cmds xz python3 sha256sum
	[ -f "$KFX/README.md" ] || { echo "SKIP: no kernel fixtures at $KFX"; exit 77; }
}

# kfx_san: true when the tools are built with sanitizers (SAN=1 from make
# check, or ASan symbols in raid-assemble).
kfx_san() {
	[ "${SAN:-}" = 1 ] && return 0
	grep -q -a -m1 __asan_init "$BIN/raid-assemble" 2>/dev/null
}

# kfx_seed: sets KSEED (RK_SEED or a fresh one) and prints how to replay.
kfx_seed() {
	KSEED=${RK_SEED:-$(( $(date +%s%N) / 1000 % 1000000007 ))}
	echo "seed $KSEED (replay with RK_SEED=$KSEED)"
}

# kfx_reseed FIX: seeds bash's RANDOM from KSEED and FIX, so one fixture's
# choices replay alone (RK_KFX=FIX RK_SEED=...).
kfx_reseed() {
	local h
	h=$(cksum <<<"$1")
	RANDOM=$(( (KSEED + ${h%% *}) % 2147483647 ))
	KRSEED=$(( (KSEED + ${h%% *}) % 2147483647 ))
}

# kfx_select MODE: prints the fixtures to check, one a line, sorted.  MODE
# all, redundant (RAID-1/4/5/6/10) or refuse (one with redundancy and no
# stale member per metadata version, and the mid-reshape one).
# Under sanitizers or with RK_KFX_SUBSET=1 (unless RK_KFX_ALL=1): the first
# fixture of each format
# (md 0.90, md 1.x, DDF, IMSM) and level, and the mid-reshape one.
# A line "# what" on stderr says which set it is.
kfx_select() {
	local sub=0
	{ kfx_san || [ "${RK_KFX_SUBSET:-}" = 1 ]; } && [ "${RK_KFX_ALL:-}" != 1 ] && sub=1
	local san=0
	kfx_san && san=1
	python3 - "$KFX" "$1" "$sub" "${RK_KFX:-}" "$san" <<'PY'
import fnmatch, json, os, sys
top, mode, sub, only, san = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4], sys.argv[5] == "1"
names = sorted(n for n in os.listdir(top) if os.path.isfile(os.path.join(top, n, "manifest.json")))
pats = [p for p in only.split(",") if p]
seen, out = set(), []
for n in names:
    if pats and not any(fnmatch.fnmatch(n, p) for p in pats):
        continue
    m = json.load(open(os.path.join(top, n, "manifest.json")))
    md = m["metadata"]
    fmt = "md0.90" if md == "0.90" else "md1" if md[0] == "1" else md
    if mode in ("redundant", "refuse") and m["level"] not in ("raid1", "raid4", "raid5", "raid6", "raid10"):
        continue
    if mode == "refuse":
        if "stale" in m:
            continue
        key = (md,)
    elif sub and not pats and san:
        key = (fmt,)          # sanitizers: one per format (decoders are fuzzed apart)
    elif sub and not pats:
        key = (fmt, m["level"])
    else:
        key = (n,)
    if key in seen and "reshape" not in m:
        continue
    seen.add(key)
    out.append(n)
what = "selected by RK_KFX" if pats else \
    "one per metadata version" if mode == "refuse" else \
    "subset (sanitizer build): one per format, and the mid-reshape one" if sub and san else \
    "subset (RK_KFX_SUBSET=1): one per format and level, and the mid-reshape one" if sub else "all"
print("# %d fixtures (%s)" % (len(out), what), file=sys.stderr)
for n in out:
    print(n)
PY
}

# kfx_vars DIR FIX...: the manifests of the fixtures as shell variables,
# one file DIR/FIX each (kfx_load sources it; one python3 run for all).
kfx_vars() {
	python3 - "$KFX" "$@" <<'PY' || fail "cannot read the manifests of $*"
import json, os, shlex, sys
top, out = sys.argv[1], sys.argv[2]
q = lambda v: shlex.quote("" if v is None else str(v))
for fx in sys.argv[3:]:
    m = json.load(open(os.path.join(top, fx, "manifest.json")))
    md = m["metadata"]
    lv = {"linear": "linear", "raid0": "0", "raid1": "1", "raid4": "4", "raid5": "5",
          "raid6": "6", "raid10": "10"}[m["level"]]
    r = m.get("reshape") or {}
    one = dict(KF_META=md, KF_FMT="md " + md if md[0] in "01" else md.upper(),
               KF_LEVEL=m["level"], KF_LV=lv, KF_LAYOUT=m["layout"],
               KF_LAYOUT_CODE=m["layout_code"], KF_CHUNK=m["chunk"] or 0, KF_N=m["raid_disks"],
               KF_VOLSIZE=m["volume_size"], KF_VOLSHA=m["volume_sha256"],
               KF_UUID=m["uuid"].replace(":", "").lower(),
               KF_RESHAPE=r.get("reshape_position"), KF_NEWN=r.get("raid_disks_after"),
               KF_OLDN=r.get("raid_disks_before"), KF_MSIZE=m["member_size"])
    lines = ["%s=%s" % (k, q(v)) for k, v in one.items()]
    ms = m["members"]
    # the guest's device names, which IMSM took for the disks' serials:
    # "# devices in the guest: /dev/ubda = m0.img.xz, ..." in examine.txt
    ser = {}
    for line in open(os.path.join(top, fx, "examine.txt")):
        if line.startswith("# devices in the guest: "):
            for w in line.split(": ", 1)[1].split(","):
                dev, _, f = w.strip().partition(" = ")
                ser[f] = dev
            break
    lines.append("KF_SERIALS=(%s)" % " ".join(q(ser.get(x["file"], "")) for x in ms))
    for k, f in (("KF_FILES", "file"), ("KF_ROLES", "role"), ("KF_STATES", "state"),
                 ("KF_OFFS", "data_offset"), ("KF_MSHA", "sha256"), ("KF_EVENTS", "events")):
        lines.append("%s=(%s)" % (k, " ".join(q(x[f]) for x in ms)))
    open(os.path.join(out, fx), "w").write("\n".join(lines) + "\n")
PY
}

# kfx_load FIX: the manifest of FIX as shell variables (from KFX_VARS, which
# kfx_run_all fills, or read now): KF_META (0.90, 1.2, ddf, imsm), KF_FMT
# (its name in raidkit's words: "md 1.2", "DDF", "IMSM"), KF_LEVEL (raid5),
# KF_LV (the contract's "5"), KF_LAYOUT, KF_LAYOUT_CODE, KF_CHUNK (0 when
# none), KF_N (raid_disks), KF_VOLSIZE, KF_VOLSHA, KF_UUID (hex digits
# only), KF_MSIZE (each member's size), KF_RESHAPE (the reshape position in
# volume bytes, or empty), KF_OLDN and KF_NEWN (members before and after
# the reshape, or empty); per member file i: KF_FILES, KF_ROLES, KF_STATES,
# KF_OFFS (data offset), KF_MSHA (sha256), KF_EVENTS, KF_SERIALS (the disk
# serial IMSM knows the member by: the guest's device name).
kfx_load() {
	if [ ! -f "${KFX_VARS:-/nonexistent}/$1" ]; then
		KFX_VARS=$PWD/kfx.vars
		mkdir -p "$KFX_VARS"
		kfx_vars "$KFX_VARS" "$1"
	fi
	. "$KFX_VARS/$1"
}

# kfx_name: KNAME, a fresh random file name (reproducible from RANDOM's
# seed; no subshell, which would not move RANDOM on).
kfx_name() {
	local sfx=(.img .raw "" .bin .dd)
	while :; do
		printf -v KNAME 'd%04x%04x%s' $RANDOM $RANDOM "${sfx[RANDOM % 5]}"
		[ -e "$KNAME" ] || break
	done
}

# kfx_xz XZ OUT: OUT is XZ unpacked.  With RK_KFX_CACHE (tests/run-cases.sh
# sets a folder it removes at the end) each fixture file is unpacked once
# per run and copied from there: every kernel case unpacks the same members,
# and a copy costs a tenth of xz.  A file enters the cache whole (renamed
# into place), so cases running side by side never see half of one.
kfx_xz() {
	local c t
	if [ -z "${RK_KFX_CACHE:-}" ]; then
		: >"$2" && xz -T1 -dc "$1" >"$2"
		return
	fi
	c=${1%/*}
	c=$RK_KFX_CACHE/${c##*/}-${1##*/}
	c=${c%.xz}
	t=$c.$BASHPID   # here: in a redirection it would be xz's own pid
	if [ ! -f "$c" ]; then
		mkdir -p "$RK_KFX_CACHE" && xz -T1 -dc "$1" >"$t" && mv -f "$t" "$c" || { rm -f "$t"; return 1; }
	fi
	cp "$c" "$2"
}

# kfx_unpack FIX [INDEX...]: unpacks FIX's members (all, or the given file
# indexes) under random names; KP[i] is the path of member file i (empty
# when not unpacked), in the current folder; KPS lists the unpacked ones.
# Returns 77 (having printed "skip FIX: why") after the first member when
# raid-examine does not decode the fixture's format yet (kfx_decoded).
kfx_unpack() {
	local fx=$1 i p idx=()
	shift
	KP=() KPS=()
	if [ $# -gt 0 ]; then idx=("$@"); else idx=("${!KF_FILES[@]}"); fi
	for i in "${!KF_FILES[@]}"; do KP[i]=""; done
	for i in "${idx[@]}"; do
		kfx_name
		p=$KNAME
		kfx_xz "$KFX/$fx/${KF_FILES[i]}" "$p" || fail "$fx: cannot unpack ${KF_FILES[i]}"
		KP[i]=$p
		KPS+=("$p")
		kfx_serial "$p" "${KF_SERIALS[i]}"
		if [ ${#KPS[@]} = 1 ] && ! kfx_decoded "$fx" "$p"; then
			echo "skip $fx: raid-examine does not decode $KF_FMT yet"
			return 77
		fi
	done
}

# kfx_unpack_meta FIX: as kfx_unpack, but for md 1.1/1.2 (metadata at the
# start) only the bytes before each member's data area are written, into a
# sparse file of the member's size: what examining needs, at a fraction of
# the cost.  Other formats are unpacked whole.
kfx_unpack_meta() {
	local fx=$1 i p
	case "$KF_META" in 1.1|1.2) ;; *) kfx_unpack "$fx"; return ;; esac
	KP=() KPS=()
	for i in "${!KF_FILES[@]}"; do
		kfx_name
		p=$KNAME
		truncate -s "$KF_MSIZE" "$p"
		xz -T1 -dc "$KFX/$fx/${KF_FILES[i]}" 2>/dev/null | head -c "${KF_OFFS[i]}" |
			dd of="$p" conv=notrunc status=none || fail "$fx: cannot unpack the start of ${KF_FILES[i]}"
		KP[i]=$p
		KPS+=("$p")
		kfx_serial "$p" "${KF_SERIALS[i]}"
	done
}

# kfx_serial FILE SERIAL: IMSM tells its disks by serial, which an image
# does not carry: FILE=SERIAL goes into RAIDKIT_DISK_SERIAL (what the tools'
# --disk-serial takes) for IMSM fixtures; KF_SERIAL_MAP keeps this fixture's.
kfx_serial() {
	[ "$KF_META" = imsm ] && [ -n "$2" ] || return 0
	KF_SERIAL_MAP="${KF_SERIAL_MAP:+$KF_SERIAL_MAP,}${1##*/}=$2"
	export RAIDKIT_DISK_SERIAL="${RAIDKIT_DISK_SERIAL:+$RAIDKIT_DISK_SERIAL,}${1##*/}=$2"
}

# kfx_shuffle WORD...: the words in a random order in the array SHUF.
kfx_shuffle() {
	local i j t
	SHUF=("$@")
	for ((i = ${#SHUF[@]} - 1; i > 0; i--)); do
		j=$((RANDOM % (i + 1)))
		t=${SHUF[i]}; SHUF[i]=${SHUF[j]}; SHUF[j]=$t
	done
}

# kfx_junk: KJUNK, an unrelated file (zero-filled or random, a few MiB)
# under a random name.
kfx_junk() {
	kfx_name
	KJUNK=$KNAME
	if [ $((RANDOM % 2)) = 0 ]; then
		truncate -s $(( (RANDOM % 8 + 1) * 1048576 )) "$KJUNK"
	else
		head -c $(( (RANDOM % 4 + 1) * 1048576 )) /dev/urandom >"$KJUNK"
	fi
}

# kfx_export_sha WANT_RC ARG...: raid-assemble --export - ARG... piped
# into sha256sum (no volume file); fails unless it exits WANT_RC; KSHA is
# the export's sha256.  When KSHA is not the manifest's, kfx_volume_diag
# tells what is wrong.
kfx_export_sha() {
	local want=$1 rc
	shift
	"$BIN/raid-assemble" --export - "$@" 2>.err | big_sha256sum >.sha
	rc=${PIPESTATUS[0]}
	[ "$rc" = "$want" ] || fail "raid-assemble --export - $*: exit $rc, expected $want: $(head -c 600 .err)"
	KSHA=$(cut -d' ' -f1 .sha)
}

# kfx_volume_diag FIX ARG...: exports the volume (raid-assemble --export
# vol ARG...) and says which 4 KiB blocks differ from the manifest's
# payload (tests/fixtures/kernel/README.md "The payload"): how many, the
# first few, and what they hold instead (another block, the payload of the
# stale pass, zeros).  On stderr; for failure messages.
kfx_volume_diag() {
	local fx=$1
	shift
	"$BIN/raid-assemble" --export vol "$@" >/dev/null 2>&1
	python3 - "$KFX/$fx/manifest.json" vol <<'PY' >&2
import json, struct, sys
m = json.load(open(sys.argv[1]))
seed, old = m["seed"], m.get("seed_before_fail")
data = open(sys.argv[2], "rb").read()
size = m["volume_size"]
print("volume: %d bytes exported, %d expected" % (len(data), size))
def block(i, sd):
    words = [((4096 * i + 8 * k) // 512) ^ sd for k in range(3, 512)]
    return b"RKPATTRN" + struct.pack("<QQ", i, sd) + struct.pack("<509Q", *words)
bad = []
for i in range(size // 4096):
    got = data[4096 * i:4096 * i + 4096]
    if got != block(i, seed):
        bad.append(i)
print("%d of %d blocks differ from the payload" % (len(bad), size // 4096))
for i in bad[:6]:
    got = data[4096 * i:4096 * i + 4096]
    if len(got) < 4096:
        what = "missing (short export)"
    elif got.count(0) == 4096:
        what = "zeros"
    elif got[:8] == b"RKPATTRN":
        j, sd = struct.unpack("<QQ", got[8:24])
        what = "block %d of %s" % (j, "the stale pass (seed_before_fail)" if sd == old else "seed %d" % sd)
    else:
        what = "not the payload: %s..." % got[:16].hex()
    print("  volume offset %d (block %d): %s" % (4096 * i, i, what))
PY
	rm -f vol
}

# kfx_check_members FIX: every unpacked member still has the manifest's
# sha256 (nothing was written to it).
kfx_check_members() {
	local i n=0 sums
	mapfile -t sums < <(big_sha256sum "${KPS[@]}" | cut -d' ' -f1)
	for i in "${!KF_FILES[@]}"; do
		[ -n "${KP[i]}" ] || continue
		[ "${KP[i]}" = "${KPS[n]}" ] || fail "$1: kfx_check_members: KP and KPS disagree"
		[ "${sums[n]}" = "${KF_MSHA[i]}" ] ||
			fail "$1: ${KF_FILES[i]} (unpacked as ${KP[i]}) changed: sha256 ${sums[n]:-?}, manifest ${KF_MSHA[i]}"
		n=$((n + 1))
	done
}

# kfx_decoded FIX FILE: true when raid-examine --json decodes FILE's metadata
# (a foreign_metadata entry of the fixture's format).  md always counts;
# DDF and IMSM only once their decoders are in (until then the cases say
# SKIP for those fixtures).
kfx_decoded() {
	case "$KF_META" in ddf|imsm) ;; *) return 0 ;; esac
	"$BIN/raid-examine" --json "$2" >.kx 2>/dev/null
	python3 - "$KF_META" <<'PY'
import json, sys
try:
    d = json.load(open(".kx"))
except ValueError:
    sys.exit(1)
fm = [f for m in d.get("members", []) for f in (m.get("foreign_metadata") or [])]
sys.exit(0 if any(str(f.get("format", "")).lower().startswith(sys.argv[1]) for f in fm) else 1)
PY
}

# kfx_roles_of STATE: the manifest roles of the member files in STATE
# (active, stale), space-separated.
kfx_roles_of() {
	local i out=()
	for i in "${!KF_FILES[@]}"; do
		[ "${KF_STATES[i]}" = "$1" ] && out+=("${KF_ROLES[i]}")
	done
	echo "${out[*]}"
}

# kfx_run_all MODE CHECK: runs the function CHECK FIX over every fixture
# kfx_select MODE gives, each in a subshell in the fresh folder kfx.work (a
# failure ends that fixture only), removed after; prints what CHECK printed with the
# fixture's time on its last line; exits 1 naming the failed fixtures,
# else 0.  CHECK returns 77 for a fixture it skips (having printed
# "skip FIX: why").  Files CHECK puts in ../keep (made here) survive to the
# next fixture.
kfx_run_all() {
	local mode=$1 check=$2 fx rc t0 ms bad=() n=0 skipped=0
	mkdir -p keep
	mapfile -t KFX_LIST < <(kfx_select "$mode" 2>keep.sel)
	cat keep.sel
	if [ ${#KFX_LIST[@]} -eq 0 ]; then
		[ -n "${RK_KFX:-}" ] && { echo "SKIP: none of RK_KFX=$RK_KFX fits this case"; exit 77; }
		fail "no fixture selected"
	fi
	KFX_VARS=$PWD/keep.vars
	mkdir -p "$KFX_VARS"
	kfx_vars "$KFX_VARS" "${KFX_LIST[@]}"
	for fx in "${KFX_LIST[@]}"; do
		t0=$(date +%s%N)
		rm -rf kfx.work && mkdir kfx.work || fail "cannot make kfx.work"
		( cd kfx.work && "$check" "$fx" ) >keep.line
		rc=$?
		rm -rf kfx.work
		ms=$(( ($(date +%s%N) - t0) / 1000000 ))
		case $rc in
			0) n=$((n + 1)) ;;
			77) skipped=$((skipped + 1)) ;;
			*) bad+=("$fx"); echo "FAILED $fx: exit $rc (see stderr)" >>keep.line ;;
		esac
		sed '$s/$/ ['"$ms"' ms]/' keep.line
		[ $rc = 0 ] || [ $rc = 77 ] || echo "FAILED $fx (seed $KSEED)" >&2
	done
	echo "${#KFX_LIST[@]} fixtures: $n passed, ${#bad[@]} failed, $skipped skipped"
	rm -rf keep.* keep
	[ ${#bad[@]} -eq 0 ] || fail "failed: ${bad[*]} (replay: RK_SEED=$KSEED RK_KFX=$(IFS=,; echo "${bad[*]}"))"
}
