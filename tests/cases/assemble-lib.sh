# assemble-lib.sh: helpers of the tests/cases/assemble_*/ scripts (sourced;
# not a case itself): the shared ones from lib.sh, and these.
. "$CASE/../lib.sh"

# Reproducible pseudo-random bytes: gen SEED BYTES > file (openssl: fast for
# the multi-megabyte volumes these cases write).
gen() {
	openssl enc -aes-128-ctr -nosalt -pass "pass:$1" -pbkdf2 -iter 1 </dev/zero 2>/dev/null | head -c "$2"
}

# The exported volume starts with FILE and is zero after it.
same_prefix_zero_tail() {
	local data=$1 vol=$2 n
	n=$(stat -c %s "$data")
	cmp -n "$n" "$data" "$vol" >/dev/null || fail "$vol: first $n bytes differ from $data"
	[ "$(tail -c +$((n + 1)) "$vol" | tr -d '\0' | head -c 1 | wc -c)" -eq 0 ] ||
		fail "$vol: non-zero bytes after the data"
}
