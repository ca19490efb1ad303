# faults-lib.sh: helpers of the tests/cases/faults_*/ scripts (sourced; not a
# case itself): crash safety through the real tools (spec/journal.md).
. "$CASE/../assemble-lib.sh"
need_tools mkraid raid-assemble
need_cmds openssl python3

# mkarr DIR LEVEL N: an array of N members in DIR made --from old (seeded),
# the volume's old contents (zero tail included) left in DIR/old.vol.
mkarr() {
	local d=$1 lvl=$2 n=$3 i
	mkdir -p "$d"
	M=()
	for i in $(seq 0 $((n - 1))); do M+=("$d/m$i"); done
	gen "old-$d" 6000000 >"$d/old"
	run 0 "$BIN/mkraid" -l "$lvl" -c 16K --create-size 8M --from "$d/old" "${M[@]}"
	run 0 "$BIN/raid-assemble" --export "$d/old.vol" "${M[@]}"
}

# check_vol OLD NEW VOL AT MODE: VOL holds OLD outside [AT, AT+size(NEW)),
# and inside it NEW (MODE complete) or, per 512-byte sector, all OLD or all
# NEW (MODE flight).  Prints how many sectors were new (a sector where OLD
# and NEW agree counts as new, except when the whole range reads old).
# cmp settles the usual answers (all new, all old); only a mix is judged
# sector by sector in python, which cost over a second a call.
check_vol() {
	local len end
	len=$(stat -c %s "$2") end=$(( $4 + len ))
	if [ "$(stat -c %s "$3")" = "$(stat -c %s "$1")" ] && cmp -s -n "$4" "$1" "$3" &&
		cmp -s -i "$end" "$1" "$3"; then
		if cmp -s -n "$len" -i "$4:0" "$3" "$2"; then
			echo $(( (end - $4 / 512 * 512 + 511) / 512 ))
			return 0
		fi
		if [ "$5" = flight ] && cmp -s -n "$len" -i "$4:$4" "$3" "$1"; then
			echo 0
			return 0
		fi
	fi
	check_vol_py "$@"
}

# check_vol_py: check_vol's whole judgement, with the message naming the
# first byte or sector that is wrong.
check_vol_py() {
	python3 - "$@" <<'PY' || fail "$3: $(cat .py 2>/dev/null)"
import sys
old = open(sys.argv[1], 'rb').read(); new = open(sys.argv[2], 'rb').read()
vol = open(sys.argv[3], 'rb').read(); at = int(sys.argv[4]); mode = sys.argv[5]
end = at + len(new)
def bad(msg):
    open('.py', 'w').write(msg); sys.exit(1)
if len(vol) != len(old): bad('volume is %d bytes, was %d' % (len(vol), len(old)))
if vol[:at] != old[:at] or vol[end:] != old[end:]:
    i = next(i for i in range(len(vol)) if (i < at or i >= end) and vol[i] != old[i])
    bad('byte %d outside the write changed' % i)
nnew = 0
s = at - at % 512
while s < end:
    a, b = max(s, at), min(s + 512, end)
    v = vol[a:b]
    if v == new[a - at:b - at]: nnew += 1
    elif mode == 'complete' or v != old[a:b]: bad('sector at %d is neither old nor new (mode %s)' % (s, mode))
    s += 512
print(nnew)
PY
}

# leave_one_out VOL N: with any one member left out the volume reads the
# same as VOL (no write hole); roles marked stale are left out as well.
leave_one_out() {
	local vol=$1 n=$2 i j
	for i in $(seq 0 $((n - 1))); do
		local use=()
		for j in $(seq 0 $((n - 1))); do [ "$j" -eq "$i" ] || use+=("${M[$j]}"); done
		run any "$BIN/raid-assemble" --export lo.vol "${use[@]}"
		[ -s lo.vol ] || continue      # too few without it (it was needed)
		cmp -s lo.vol "$vol" || fail "without ${M[$i]} the volume reads differently (write hole)"
		rm -f lo.vol
	done
}

# recover_rw VOL: a read-write open (the journal replays onto the members,
# the array is marked clean) through --write of the volume's own first
# byte, then the volume must read exactly as VOL (the read-only replay).
recover_rw() {
	local vol=$1
	head -c 1 "$vol" >one
	run any "$BIN/raid-assemble" --write one --at 0 "${M[@]}"
	run any "$BIN/raid-assemble" --export rw.vol "${M[@]}"
	cmp -s rw.vol "$vol" || fail "after the read-write replay the volume reads differently"
	rm -f rw.vol one
}
