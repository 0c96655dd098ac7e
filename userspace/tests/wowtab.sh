#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# wowtab (the generator, check, start, udev-origin) and wow-probe on sample
# files; no root device needed (start runs against stub dmsetup and
# blockdev commands).  One PASS:/FAIL: line per case.
# Usage: tests/wowtab.sh path/to/wowtab path/to/wow-probe
set -eu
WOWTAB_CMD=$(cd "$(dirname "${1:-./wowtab}")" && pwd)/$(basename "${1:-./wowtab}")
PROBE=$(cd "$(dirname "${2:-./wow-probe}")" && pwd)/$(basename "${2:-./wow-probe}")
PYTHON=${PYTHON:-python3}
failed=0
T=$(mktemp -d /tmp/wowtab-test.XXXXXX)
trap 'rm -rf "$T"' EXIT

pass() { echo "PASS: userspace/$1"; }
fail() { echo "FAIL: userspace/$1 ($2)"; failed=1; }
# check NAME WHY COMMAND...: pass when COMMAND succeeds
check() {
	name=$1 why=$2
	shift 2
	if "$@"; then pass "$name"; else fail "$name" "$why"; fi
}

wt() { WOWTAB="$T/wowtab" "$WOWTAB_CMD" "$@"; }

# ---- a good file: every line gives a unit -----------------------------------
cat >"$T/wowtab" <<'EOF'
# name  origin                                cache                               options
slow    /dev/disk/by-id/ata-WDC_WD40-68N3_WD-W1  /dev/disk/by-id/nvme-Samsung_970-part2  block_size=8192,policy=cscan,max_age=30
	# an indented comment, and blank lines

fast-1  /dev/disk/by-partuuid/0a1b2c3d-01     /dev/disk/by-id/nvme-eui.0025385b71b07e2f-part3
opt.x   /dev/disk/by-path/pci-0000:00:1f.2-ata-1  /dev/md/fast  cleaner,nofail
later   /dev/mapper/vg-slow                   /dev/mapper/vg-fast  noauto
EOF
mkdir "$T/gen"
rc=0
wt generate "$T/gen" 2>"$T/err" || rc=$?
check wowtab_good_file_exits_0 "rc $rc: $(cat "$T/err")" [ $rc -eq 0 ]
check wowtab_good_file_no_messages "$(cat "$T/err")" [ ! -s "$T/err" ]
units=$(cd "$T/gen" && ls -1 ./*.service 2>/dev/null | wc -l)
check wowtab_one_unit_per_line "$units units" [ "$units" -eq 4 ]

u=$T/gen/dm-wow@slow.service
check wowtab_unit_named_for_device "no $u" [ -f "$u" ]
line() { grep -x "$1" "$u" >/dev/null; }
check wowtab_unit_no_default_dependencies "" line 'DefaultDependencies=no'
check wowtab_unit_before_local_fs_pre "" line 'Before=local-fs-pre.target'
check wowtab_unit_execstart_has_the_line "$(grep ExecStart= "$u")" \
	line 'ExecStart=/[^ ]*/wowtab start slow /dev/disk/by-id/ata-WDC_WD40-68N3_WD-W1 /dev/disk/by-id/nvme-Samsung_970-part2 block_size=8192,policy=cscan,max_age=30'
check wowtab_unit_execstop_removes "" line 'ExecStop=/[^ ]*/wowtab stop slow'
check wowtab_unit_oneshot_remains "" line 'RemainAfterExit=yes'

# the .device and unit names are systemd-escape's
if command -v systemd-escape >/dev/null 2>&1; then
	ok=1
	while read -r name origin cache; do
		f="$T/gen/dm-wow@$(systemd-escape "$name").service"
		o=$(systemd-escape --path --suffix=device "$origin")
		c=$(systemd-escape --path --suffix=device "$cache")
		if ! [ -f "$f" ] || ! grep -qxF "BindsTo=$o $c" "$f" ||
		   ! grep -qxF "After=$o $c" "$f"; then
			ok=0
			fail wowtab_names_match_systemd_escape "$name: $(grep -h BindsTo= "$f" 2>&1), want BindsTo=$o $c"
		fi
	done <<-'EOF'
	slow /dev/disk/by-id/ata-WDC_WD40-68N3_WD-W1 /dev/disk/by-id/nvme-Samsung_970-part2
	fast-1 /dev/disk/by-partuuid/0a1b2c3d-01 /dev/disk/by-id/nvme-eui.0025385b71b07e2f-part3
	opt.x /dev/disk/by-path/pci-0000:00:1f.2-ata-1 /dev/md/fast
	later /dev/mapper/vg-slow /dev/mapper/vg-fast
	EOF
	[ $ok = 1 ] && pass wowtab_names_match_systemd_escape
	# the characters wowtab lets through, one by one
	mkdir "$T/esc"
	cat >"$T/wowtab" <<-'EOF'
	a+b_c.d-e /dev/disk/by-path/x\x20y@z=1,2 /dev/.hidden/c+d
	EOF
	wt generate "$T/esc" 2>"$T/err" || true
	f="$T/esc/dm-wow@$(systemd-escape 'a+b_c.d-e').service"
	want="BindsTo=$(systemd-escape --path --suffix=device '/dev/disk/by-path/x\x20y@z=1,2') $(systemd-escape --path --suffix=device /dev/.hidden/c+d)"
	if [ -f "$f" ] && grep -qxF "$want" "$f"; then
		pass wowtab_escapes_like_systemd_escape
	else
		fail wowtab_escapes_like_systemd_escape "$(ls "$T/esc") $(cat "$T/err") $(grep -h BindsTo= "$T"/esc/*.service 2>&1), want $want"
	fi
	check wowtab_execstart_doubles_backslash "$(grep -h ExecStart= "$f" 2>&1)" \
		grep -qF 'start a+b_c.d-e /dev/disk/by-path/x\\x20y@z=1,2 /dev/.hidden/c+d -' "$f"
else
	echo "SKIP: userspace/wowtab_names_match_systemd_escape (no systemd-escape)"
fi

# systemd parses the units without a complaint (but that wowtab is not
# installed where they name it)
if command -v systemd-analyze >/dev/null 2>&1; then
	out=$(cd "$T/gen" && SYSTEMD_LOG_LEVEL=notice timeout 120 \
		systemd-analyze verify --man=no ./*.service 2>&1 |
		grep -v 'Command /[^ ]*/wowtab is not executable' || true)
	check wowtab_units_pass_systemd_analyze_verify "$out" [ -z "$out" ]
else
	echo "SKIP: userspace/wowtab_units_pass_systemd_analyze_verify (no systemd-analyze)"
fi

# wants/requires: default requires, nofail wants, noauto nothing
g=$T/gen
check wowtab_default_is_required_by_local_fs "" \
	[ -L "$g/local-fs.target.requires/dm-wow@slow.service" ]
check wowtab_nofail_is_wanted_by_local_fs "" \
	[ -L "$g/local-fs.target.wants/dm-wow@opt.x.service" ]
noauto_ok() {
	[ ! -e "$g/local-fs.target.requires/dm-wow@later.service" ] &&
		[ ! -e "$g/local-fs.target.wants/dm-wow@later.service" ] &&
		[ -f "$g/dm-wow@later.service" ]
}
check wowtab_noauto_is_not_pulled_in "" noauto_ok
check wowtab_link_points_at_unit "$(readlink "$g/local-fs.target.requires/dm-wow@slow.service")" \
	[ "$(readlink "$g/local-fs.target.requires/dm-wow@slow.service")" = ../dm-wow@slow.service ]
check wowtab_unit_flags_not_in_table "" \
	grep -q 'start opt.x /dev/disk/by-path/pci-0000:00:1f.2-ata-1 /dev/md/fast cleaner,nofail$' \
	"$g/dm-wow@opt.x.service"

# ---- bad lines: a clear message each, nothing for them, the rest goes on ----
cat >"$T/wowtab" <<'EOF'
good1 /dev/disk/by-id/o1 /dev/disk/by-id/c1
twofields /dev/disk/by-id/o2
five /dev/disk/by-id/o3 /dev/disk/by-id/c3 cleaner extra
-dash /dev/disk/by-id/o4 /dev/disk/by-id/c4
sl/ash /dev/disk/by-id/o5 /dev/disk/by-id/c5
rel disk/by-id/o6 /dev/disk/by-id/c6
space /dev/disk/by-id/o7%x /dev/disk/by-id/c7
dots /dev/disk/../sda /dev/disk/by-id/c8
same /dev/disk/by-id/o9 /dev/disk/by-id/o9
fmt /dev/disk/by-id/o10 /dev/disk/by-id/c10 block_size=4096,format
unk /dev/disk/by-id/o11 /dev/disk/by-id/c11 colour=blue
num /dev/disk/by-id/o12 /dev/disk/by-id/c12 block_size=4k
pol /dev/disk/by-id/o13 /dev/disk/by-id/c13 policy=lru
twice /dev/disk/by-id/o14 /dev/disk/by-id/c14 max_age=1,max_age=2
flagv /dev/disk/by-id/o15 /dev/disk/by-id/c15 cleaner=1
empty /dev/disk/by-id/o16 /dev/disk/by-id/c16 cleaner,,nofail
good1 /dev/disk/by-id/o17 /dev/disk/by-id/c17
dupo /dev/disk/by-id/o1 /dev/disk/by-id/c18
dupc /dev/disk/by-id/o19 /dev/disk/by-id/c1
cross /dev/disk/by-id/c1 /dev/disk/by-id/c20
byuuid /dev/disk/by-uuid/5f3c /dev/disk/by-id/c22
good2 /dev/disk/by-id/o21 /dev/disk/by-id/c21 defaults
EOF
mkdir "$T/bad"
rc=0
wt generate "$T/bad" 2>"$T/err" || rc=$?
check wowtab_bad_lines_exit_1 "rc $rc" [ $rc -eq 1 ]
units=$(cd "$T/bad" && ls -1 ./*.service | tr '\n' ' ')
check wowtab_bad_lines_emit_nothing "units: $units" \
	[ "$units" = "./dm-wow@good1.service ./dm-wow@good2.service " ]
# every bad line (2..21) named by file and line, with the reason
for spec in '2:got 2 fields' '3:got 5 fields' '4:must start with a letter' \
	'5:letters, digits and _+.- only' '6:not a path under /dev' \
	'7:has a character' '8:not a plain path' '9:same device' \
	'10:option .format. is refused' '11:unknown option .colour.' \
	'12:needs a decimal number' '13:wow, cscan or lrw' \
	'14:given twice' '15:takes no value' '16:empty option' \
	'17:name .good1. is on an earlier line' \
	'18:origin .* is on an earlier line' '19:cache .* is on an earlier line' \
	'20:is origin or cache on an earlier line' \
	'21:names a file system'; do
	n=${spec%%:*} msg=${spec#*:}
	check "wowtab_bad_line_${n}_says_why" "$(grep ":$n:" "$T/err" || echo "no message for line $n")" \
		grep -q "^wowtab: $T/wowtab:$n: .*$msg.*; line skipped\$" "$T/err"
done
nmsg=$(wc -l <"$T/err")
check wowtab_one_message_per_bad_line "$nmsg lines: $(cat "$T/err")" [ "$nmsg" -eq 20 ]
rc=0
wt check >"$T/out" 2>/dev/null || rc=$?
check wowtab_check_exits_1_on_bad_lines "rc $rc" [ $rc -eq 1 ]
check wowtab_check_prints_table_of_good_lines "$(cat "$T/out")" \
	grep -qx 'good1: 0 <sectors of /dev/disk/by-id/o1> wow /dev/disk/by-id/o1 /dev/disk/by-id/c1 0' "$T/out"

# no file: an error, no unit
mkdir "$T/none"
rc=0
WOWTAB=$T/missing "$WOWTAB_CMD" generate "$T/none" 2>"$T/err" || rc=$?
missing_ok() {
	[ $rc -eq 1 ] && grep -q "cannot read $T/missing" "$T/err" &&
		[ -z "$(ls "$T/none")" ]
}
check wowtab_missing_file_is_an_error "rc $rc $(cat "$T/err")" missing_ok

# as a generator: systemd runs it by that name with three directories
ln -s "$WOWTAB_CMD" "$T/dm-wow-generator"
mkdir "$T/n" "$T/e" "$T/l"
printf 'g /dev/disk/by-id/o /dev/disk/by-id/c\n' >"$T/wowtab"
WOWTAB=$T/wowtab "$T/dm-wow-generator" "$T/n" "$T/e" "$T/l" 2>"$T/err" || true
check wowtab_runs_as_systemd_generator "$(ls "$T/n") $(cat "$T/err")" \
	[ -f "$T/n/dm-wow@g.service" ]

# ---- start: the table it loads (stub dmsetup and blockdev) -------------------
mkdir "$T/bin"
cat >"$T/bin/dmsetup" <<EOF
#!/bin/sh
case \$1 in
info) exit 1 ;;
create) printf '%s\n' "\$*" >"$T/dmsetup.args" ;;
esac
EOF
cat >"$T/bin/blockdev" <<'EOF'
#!/bin/sh
echo 1000007
EOF
chmod +x "$T/bin/dmsetup" "$T/bin/blockdev"
blk=$(ls /dev/loop0 /dev/loop1 2>/dev/null | head -n 2 | tr '\n' ' ')
if [ "$(echo $blk | wc -w)" -eq 2 ] && [ -b "${blk%% *}" ]; then
	set -- $blk
	o=$1 c=$2
	start_table() {	# start_table OPTIONS: the table line start makes
		rm -f "$T/dmsetup.args"
		PATH=$T/bin:$PATH "$WOWTAB_CMD" start t "$o" "$c" "$1" 2>/dev/null || true
		cat "$T/dmsetup.args" 2>/dev/null || true
	}
	got=$(start_table -)
	check wowtab_start_length_in_whole_4k_blocks "$got" \
		[ "$got" = "create t --table 0 1000000 wow $o $c 0" ]
	got=$(start_table block_size=65536,policy=lrw,cleaner,nofail)
	check wowtab_start_length_in_whole_blocks_and_options "$got" \
		[ "$got" = "create t --table 0 999936 wow $o $c 5 block_size 65536 policy lrw cleaner" ]
	got=$(start_table block_size=512)
	check wowtab_start_512_byte_blocks "$got" \
		[ "$got" = "create t --table 0 1000007 wow $o $c 2 block_size 512" ]
	got=$(start_table format)
	check wowtab_start_refuses_format "$got" [ -z "$got" ]
	printf 'byname %s %s max_age=5\n' "$o" "$c" >"$T/wowtab"
	rm -f "$T/dmsetup.args"
	WOWTAB=$T/wowtab PATH=$T/bin:$PATH "$WOWTAB_CMD" start byname 2>/dev/null || true
	got=$(cat "$T/dmsetup.args" 2>/dev/null || true)
	check wowtab_start_by_name_reads_wowtab "$got" \
		[ "$got" = "create byname --table 0 1000000 wow $o $c 2 max_age 5" ]
else
	echo "SKIP: userspace/wowtab_start_* (no /dev/loop0 and /dev/loop1 nodes)"
fi

# ---- udev-origin -------------------------------------------------------------
printf 'slow /dev/disk/by-id/ata-SLOW /dev/disk/by-id/nvme-FAST\n' >"$T/wowtab"
uo() { env -i PATH="$PATH" WOWTAB="$T/wowtab" "$@" "$WOWTAB_CMD" udev-origin; }
got=$(uo DEVNAME=/dev/sdq DEVLINKS="/dev/disk/by-path/x /dev/disk/by-id/ata-SLOW /dev/disk/by-uuid/u /dev/disk/by-label/my\x20fs /dev/disk/by-partuuid/p")
check wowtab_udev_origin_by_link "$got" \
	[ "$got" = "$(printf 'WOW_ORIGIN_OF=slow\nWOW_ORIGIN_LINK_1=disk/by-path/x\nWOW_ORIGIN_LINK_2=disk/by-id/ata-SLOW\nWOW_ORIGIN_LINK_3=disk/by-partuuid/p')" ]
# the rules have 16 SYMLINK lines
many=$(i=0; while [ $i -lt 20 ]; do i=$((i + 1)); printf '/dev/l/%d ' $i; done)
got=$(uo DEVNAME=/dev/sdq DEVLINKS="$many /dev/disk/by-id/ata-SLOW" 2>/dev/null | grep -c LINK_)
check wowtab_udev_origin_at_most_16_links "$got" [ "$got" = 16 ]
got=$(uo DEVNAME=/dev/sdr DEVLINKS="/dev/disk/by-id/ata-SLOWER /dev/disk/by-id/nvme-FAST")
check wowtab_udev_not_an_origin "$got" [ -z "$got" ]
printf 'slow /dev/sdq /dev/disk/by-id/nvme-FAST\n' >"$T/wowtab"
got=$(uo DEVNAME=/dev/sdq)
check wowtab_udev_origin_by_devname "$got" \
	[ "$got" = WOW_ORIGIN_OF=slow ]

# ---- wow-probe -----------------------------------------------------------------
# a superblock as the kernel writes it (dm-wow/dm-wow-super.c): the magic at
# 8, crc32c (kernel style: seed, no inversion) of bytes 4..511 at 0
if "$PYTHON" -c 'import struct' 2>/dev/null; then
	"$PYTHON" - "$T" <<'EOF'
import struct, sys
def crc32c(seed, data):
    crc = seed
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc
sb = bytearray(4096)
struct.pack_into("<IIQIIIIQQQQQ", sb, 0, 0, 2, 0x48434143574f5744, 1,
                 4096, 1 << 20, 1 << 17, 4194304, 131072, 1 << 20, 60, 0)
sb[72:88] = bytes(range(0x10, 0x20))
sb[88:88 + 13] = b"PARTUUID=ab\"c"
struct.pack_into("<I", sb, 0, crc32c(0xd3f00d5e, bytes(sb[4:512])))
open(sys.argv[1] + "/sb.img", "wb").write(sb + bytes(4096))
bad = bytearray(sb); bad[300] ^= 1
open(sys.argv[1] + "/bad.img", "wb").write(bad + bytes(4096))
open(sys.argv[1] + "/zero.img", "wb").write(bytes(8192))
EOF
	"$PROBE" "$T/sb.img" >"$T/p" 2>&1 || true
	check wow_probe_recognises_a_cache "$(cat "$T/p")" grep -qx WOW_CACHE=1 "$T/p"
	check wow_probe_checks_the_superblock "$(cat "$T/p")" grep -qx WOW_CACHE_SB=valid "$T/p"
	check wow_probe_uuid "$(cat "$T/p")" \
		grep -qx WOW_CACHE_UUID=10111213-1415-1617-1819-1a1b1c1d1e1f "$T/p"
	check wow_probe_geometry "$(cat "$T/p")" grep -qx WOW_CACHE_BLOCK_SIZE=4096 "$T/p"
	check wow_probe_origin_id_is_safe "$(cat "$T/p")" \
		grep -qx 'WOW_CACHE_ORIGIN_ID=PARTUUID=ab_c' "$T/p"
	DEVLINKS="/dev/disk/by-id/nvme-X-part2 /dev/disk/by-uuid/old /dev/disk/by-label/old\x20fs /dev/disk/by-path/pci-1" \
		"$PROBE" "$T/sb.img" >"$T/p" 2>&1 || true
	check wow_probe_keeps_links_but_file_system_ones "$(cat "$T/p")" \
		sh -c "grep -qx WOW_CACHE_LINK_1=disk/by-id/nvme-X-part2 '$T/p' &&
		       grep -qx WOW_CACHE_LINK_2=disk/by-path/pci-1 '$T/p' &&
		       [ \$(grep -c WOW_CACHE_LINK '$T/p') = 2 ]"
	"$PROBE" "$T/bad.img" >"$T/p" 2>&1 || true
	check wow_probe_corrupt_superblock "$(cat "$T/p")" \
		[ "$(grep -v WOW_CACHE_LINK "$T/p")" = "$(printf 'WOW_CACHE=1\nWOW_CACHE_SB=corrupt')" ]
	rc=0
	"$PROBE" "$T/zero.img" >"$T/p" 2>&1 || rc=$?
	silent_ok() { [ $rc -eq 0 ] && [ ! -s "$T/p" ]; }
	check wow_probe_silent_on_other_devices "rc $rc: $(cat "$T/p")" silent_ok
	rc=0
	"$PROBE" "$T/missing.img" >"$T/p" 2>&1 || rc=$?
	check wow_probe_unreadable_exits_1 "rc $rc" [ $rc -eq 1 ]
else
	echo "SKIP: userspace/wow_probe_* (no $PYTHON)"
fi

exit $failed
