# SPDX-License-Identifier: GPL-2.0
# Generate hostile dm-wow option lists (fuzz-tables.sh, fuzz-messages.sh).
#   awk -v seed=S -v n=N -v mode=table|message -f fuzzgen.awk
# table: one case a line, "<class> <#opt_args> <opt words...>"
# message: "<class> <message words...>"
# class R: must be refused; A: may be accepted or refused (a random valid
# combination: constraints between options can still refuse it).
function pick(s,   a, k) { k = split(s, a, " "); return a[int(rand() * k) + 1] }
function pow2(lo, hi,   v) { v = lo; while (v < hi && rand() < 0.5) v *= 2; return v }
function goodval(o) {
	if (o == "block_size") return pow2(512, 65536)
	if (o == "erase_block_size") return pow2(65536, 16777216)
	if (o == "write_group_size") return pow2(65536, 67108864)
	if (o == "policy") return pick("wow cscan lrw")
	if (o == "low_watermark") return int(rand() * 80)
	if (o == "high_watermark") return 90 + int(rand() * 11)
	if (o == "max_destage_ios") return 1 + int(rand() * 4096)
	if (o == "max_destage_size") return pow2(65536, 8388608)
	if (o == "max_age") return int(rand() * 604801)
	if (o == "sequential_cutoff") return int(rand() * 1073741825)
	return ""
}
function longtok(   s, i) { s = ""; for (i = 0; i < 40; i++) s = s "9999999999"; return s }
function badval() {
	return pick("-1 -4096 4294967296 4294967297 18446744073709551615 18446744073709551616 99999999999999999999999 abc 4096x 0x1000 1e3 --1 4096.0 - NaN " longtok())
}
BEGIN {
	srand(seed)
	split("block_size erase_block_size write_group_size policy low_watermark high_watermark max_destage_ios max_destage_size max_age sequential_cutoff cleaner format", OPTS, " ")
	split("low_watermark high_watermark max_destage_ios max_destage_size max_age sequential_cutoff", TUN, " ")
	for (c = 0; c < n; c++) {
		delete used
		w = ""; cnt = 0
		if (mode == "message") {
			o = TUN[int(rand() * 6) + 1]
			r = rand()
			if (r < 0.3) { print "A " o " " goodval(o); continue }
			if (r < 0.45) { print "R " o " " badval(); continue }
			if (r < 0.52) { print "R " o; continue }
			if (r < 0.59) { print "R " o " " goodval(o) " " goodval(o); continue }
			if (r < 0.66) { print "R " pick("frobnicate block_size erase_block_size write_group_size policy format cleaner_on commitx CLEAR_STATS") " " goodval(o); continue }
			if (r < 0.72) { print "R cleaner " pick("yes 1 0 onn offf on_ of " badval()); continue }
			if (r < 0.76) { print "R " pick("commit clear_stats") " extra"; continue }
			if (r < 0.80) { print "R " longtok(); continue }
			if (r < 0.84) { print "A " pick("commit clear_stats"); continue }
			if (r < 0.90) { print "A low_watermark " int(rand() * 100); continue }
			if (r < 0.96) { print "A high_watermark " (1 + int(rand() * 100)); continue }
			if (rand() < 0.5) print "R low_watermark " pick("100 101 255 256 1000")
			else print "R high_watermark " pick("0 101 255 256 1000")
			continue
		}
		k = 1 + int(rand() * 4)
		for (i = 0; i < k; i++) {
			o = OPTS[int(rand() * 12) + 1]
			if (o in used) continue
			used[o] = 1
			v = goodval(o)
			w = w " " o (v == "" ? "" : " " v)
			cnt += (v == "" ? 1 : 2)
		}
		r = rand()
		cls = "R"
		if (r < 0.35) cls = "A"
		else if (r < 0.45) cnt += pick("1 2 -1 4294967296 -4294967295") + 0
		else if (r < 0.5) { print "R " pick("-1 x 4294967297 18446744073709551617 0x2") w; continue }
		else if (r < 0.6) { o = TUN[int(rand() * 6) + 1]; w = w " " o " " badval(); cnt += 2 }
		else if (r < 0.65) { o = pick("block_size erase_block_size write_group_size"); w = w " " o " " pick("0 1 3 511 1000 12288 536870912 4294967296 -512"); cnt += 2 }
		else if (r < 0.72) { w = w " " pick("frobnicate BLOCK_SIZE block-size blocksize cleanerx formatted policy=wow wow 0 4096") " 1"; cnt += 2 }
		else if (r < 0.78) { o = OPTS[int(rand() * 12) + 1]; v = goodval(o); w = w " " o (v == "" ? "" : " " v) " " o (v == "" ? "" : " " v); cnt += (v == "" ? 2 : 4) }
		else if (r < 0.84) { o = TUN[int(rand() * 6) + 1]; w = w " " o; cnt += 1 }
		else if (r < 0.88) { w = w " " longtok() " " longtok(); cnt += 2 }
		else if (r < 0.94) { lw = 1 + int(rand() * 99); hw = 1 + int(rand() * lw); w = w " low_watermark " lw " high_watermark " hw; cnt += 4; if ((w ~ / low_watermark .* low_watermark /) || (w ~ / high_watermark .* high_watermark /)) {} }
		else { w = w " policy " pick("lru WOW fifo wowx '' -"); cnt += 2 }
		print cls " " cnt w
	}
}
