# examine-lib.sh: helpers of the tests/cases/examine_*/ scripts (sourced;
# not a case itself): the shared ones from lib.sh, and this.
. "$CASE/../lib.sh"

# Reproducible pseudo-random bytes: gen SEED BYTES > file (python3 only: these
# cases need no openssl; other bytes than assemble-lib.sh's gen for a seed).
gen() {
	python3 -c 'import random,sys; r=random.Random(sys.argv[1]); sys.stdout.buffer.write(r.randbytes(int(sys.argv[2])))' "$1" "$2"
}
