# Shared by the resize_* cases: BIN, fail, skip when tools are missing,
# and check_array OLD_VOLUME MEMBER...: the volume starts with OLD_VOLUME's
# bytes and is zero after them, and a scrub finds nothing.
set -u
fail() { echo "FAIL: $*"; exit 1; }
for t in mkraid raid-assemble raid-resize; do
	[ -x "$BIN/$t" ] || { echo "SKIP: $t not built yet"; exit 77; }
done
check_array() {
	local old=$1; shift
	"$BIN/raid-assemble" --export vol.chk "$@" > /dev/null 2> err.chk || fail "export: $(cat err.chk)"
	local n; n=$(stat -c %s "$old")
	cmp -n "$n" "$old" vol.chk > /dev/null || fail "volume differs from the original ($*)"
	local total; total=$(stat -c %s vol.chk)
	[ "$total" -ge "$n" ] || fail "volume shrank below the original"
	if [ "$total" -gt "$n" ]; then
		cmp -n $((total - n)) <(tail -c +$((n + 1)) vol.chk) /dev/zero > /dev/null || fail "new space is not zero"
	fi
	if [ -x "$BIN/raid-scrub" ]; then
		"$BIN/raid-scrub" --json "$@" > scrub.json 2> err.chk
		local rc=$?
		[ $rc -eq 0 ] || grep -q "no redundancy" err.chk || fail "scrub exit $rc: $(cat scrub.json err.chk)"
	fi
	rm -f vol.chk
}
