#!/bin/bash
# demo.sh: `make demo`, raidkit's story in one run.
#
# Makes an ext4 volume full of generated files, puts it on a RAID-6 over six
# image files, shuffles and renames the images, throws two away, and gets
# the volume back with raid-assemble; then proves it: e2fsck -fn must be
# clean and every file must have its original SHA-256 (read back with
# debugfs, so nothing is mounted).  Works in a temporary folder it removes;
# exits non-zero if anything does not match.  O names the build folder.
set -u
O=${O:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
bin=$top/$O/bin
case $O in /*) bin=$O/bin ;; esac

say()  { printf '%s\n' "$*"; }
die()  { printf 'demo: FAILED: %s\n' "$*" >&2; exit 1; }
if [ -t 1 ]; then step() { printf '\n\033[1m%s\033[0m\n' "$*"; }; else step() { printf '\n%s\n' "$*"; }; fi

for t in mkraid raid-assemble; do
	[ -x "$bin/$t" ] || die "$bin/$t is not built (run: make O=$O)"
done
for t in mkfs.ext4 e2fsck debugfs sha256sum openssl shuf; do
	command -v "$t" >/dev/null 2>&1 || die "$t is missing (Debian: apt-get install e2fsprogs coreutils openssl)"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/raidkit-demo.XXXXXX") || die "cannot make a temporary folder"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || die "cd $tmp"

# Pseudo-random bytes without the network or a big entropy pool.
bytes() { openssl enc -aes-128-ctr -nosalt -pass "pass:$1" -pbkdf2 -iter 1 </dev/zero 2>/dev/null | head -c "$2"; }

step "1. A folder of files to keep safe"
mkdir -p files/photos files/letters files/archive/2023 files/archive/2024
for i in $(seq 1 12); do bytes "photo$i" $((150000 + i * 23457)) >"files/photos/IMG_$((4000 + i)).raw"; done
for i in $(seq 1 8); do
	{ printf 'Dear reader %d,\n\n' "$i"; seq -f "line %g of a letter that must survive a failed disk" 1 $((i * 300)); } \
		>"files/letters/letter-$i.txt"
done
for y in 2023 2024; do
	for m in 01 04 07 10; do bytes "ledger-$y-$m" $((400000 + 10#$m * 10000)) >"files/archive/$y/ledger-$m.bin"; done
done
bytes big 4000000 >files/archive/backup.tar
: >files/empty-note.txt
(cd files && find . -type f -exec sha256sum {} + | sort -k2) >want.sha256
nfiles=$(wc -l <want.sha256)
say "   $nfiles files, $(du -sh files | cut -f1) in all; their SHA-256 sums are kept in want.sha256"

step "2. An ext4 file system holding them (mkfs.ext4 -d)"
mkfs.ext4 -q -F -d files -L raidkit-demo fs.img 40M >mkfs.log 2>&1 || { cat mkfs.log; die "mkfs.ext4"; }
say "   fs.img: $(stat -c %s fs.img) bytes"

step "3. A RAID-6 over six image files, filled with the file system"
say "   \$ mkraid -l 6 --name demo --create-size 16M --from fs.img disk1.img ... disk6.img"
"$bin/mkraid" -l 6 --name demo --create-size 16M --from fs.img disk{1..6}.img 2>&1 | sed 's/^/   /'
[ "${PIPESTATUS[0]}" -eq 0 ] || die "mkraid"
ls -ls disk*.img | awk '{printf "   %-10s %12d bytes, %6d KiB on disk (sparse)\n", $NF, $6, $1}'

step "4. Disks pulled from their bays: shuffled, renamed, two lost"
mkdir box
names=(unlabelled-A.img "from the shelf.bin" evidence-07.dd spare.raw disk-zz.img 2f9c.img)
order=($(seq 1 6 | shuf))
for i in 0 1 2 3 4 5; do
	mv "disk${order[$i]}.img" "box/${names[$i]}"
	say "   disk${order[$i]}.img -> box/${names[$i]}"
done
lost=$(cd box && ls | shuf -n 2)
while IFS= read -r f; do rm -f "box/$f"; say "   lost: box/$f"; done <<<"$lost"
mapfile -t left < <(ls box | shuf)
members=("${left[@]/#/box/}")

step "5. raid-assemble finds the roles (in any order, under any name)"
say "   \$ raid-assemble box/*"
"$bin/raid-assemble" "${members[@]}" 2>&1 | sed 's/^/   /'
rc=${PIPESTATUS[0]}
say "   (exit $rc: 1 means it runs degraded)"
[ "$rc" -eq 1 ] || die "expected a degraded array (exit 1), got exit $rc"

step "6. The volume back, reconstructed from four of six"
say "   \$ raid-assemble --export volume.img box/*"
"$bin/raid-assemble" --export volume.img "${members[@]}" >export.log 2>&1
rc=$?
tail -n 1 export.log | sed 's/^/   /'
[ "$rc" -eq 1 ] || { cat export.log; die "export (exit $rc)"; }
cmp -n "$(stat -c %s fs.img)" fs.img volume.img >/dev/null || die "volume.img differs from fs.img"
say "   the first $(stat -c %s fs.img) bytes equal fs.img byte for byte"

step "7. Proof: e2fsck -fn and the files' SHA-256"
e2fsck -fn volume.img >fsck.log 2>&1 || { cat fsck.log; die "e2fsck found problems"; }
tail -n 1 fsck.log | sed 's/^/   e2fsck: /'
mkdir out
debugfs -R "rdump / out" volume.img >debugfs.log 2>&1 || { cat debugfs.log; die "debugfs rdump"; }
(cd out && find . -path ./lost+found -prune -o -type f -exec sha256sum {} + | sort -k2) >got.sha256
if ! diff -u want.sha256 got.sha256 >hash.diff; then
	cat hash.diff
	die "file hashes differ"
fi
say "   all $nfiles files read back with debugfs have their original SHA-256"

step "Done: two of six disks lost, names and order scrambled, every byte back."
exit 0
