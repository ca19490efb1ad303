# resize-lib.sh: helpers of the tests/cases/resize_*/ scripts (sourced; not
# a case itself): the shared ones from lib.sh, and check_array.
. "$CASE/../lib.sh"
need_tools mkraid raid-assemble raid-resize

# check_array OLD_VOLUME MEMBER...: the volume starts with OLD_VOLUME's
# bytes and is zero after them, and a scrub finds nothing.
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
