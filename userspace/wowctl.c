// SPDX-License-Identifier: GPL-2.0
/*
 * wowctl: create, inspect, control and remove dm-wow devices.  A thin CLI
 * over libwow, which parses the status and table lines, names every field,
 * checks a new device's table as the kernel would and talks to
 * device-mapper, and wowcache, which reads a cache device offline (check,
 * dump, writeback, metadata-size).
 *
 * Exit status (usage_text and wowctl.8 say the same): 0 success, 1 error,
 * 2 usage error; the offline commands also 3 (warnings only) and 4
 * (errors found); status --health 3 (a device degraded) and 4 (a device
 * failed); clean and remove --clean 130 when interrupted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libwow.h"
#include "wowcache.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define EXIT_USAGE	2
#define EXIT_DEGRADED	3	/* status --health */
#define EXIT_FAILED	4
#define EXIT_INTERRUPTED 130	/* clean, remove --clean: SIGINT, SIGTERM */
#define FLAG_JSON	(1U << 0)
#define FLAG_RST	(1U << 1)
#define FLAG_SCAN	(1U << 2)
#define FLAG_DRY_RUN	(1U << 3)
#define FLAG_FORCE	(1U << 4)
#define FLAG_CACHE_SIZE	(1U << 5)	/* options with a value */
#define FLAG_BLOCK_SIZE	(1U << 6)
#define FLAG_ERASE_SIZE	(1U << 7)
#define FLAG_OPTION	(1U << 8)	/* repeatable: create -o KEY=VALUE */
#define FLAG_WATCH	(1U << 9)
#define FLAG_COUNT	(1U << 10)
#define FLAG_HEALTH	(1U << 11)
#define FLAG_CLEAN	(1U << 12)
#define FLAG_INTERVAL	(1U << 13)
#define FLAG_PROMETHEUS	(1U << 14)

/*
 * Options: a flag, or one with a value (stored in struct call).  Each
 * command passes getopt_long only the options it accepts (cmd_longopts).
 */
static const struct opt {
	const char *name;	/* long, without the dashes */
	unsigned int flag;
	bool value;
} opts[] = {
	{ "json", FLAG_JSON, false },
	{ "rst", FLAG_RST, false },
	{ "scan", FLAG_SCAN, false },
	{ "dry-run", FLAG_DRY_RUN, false },
	{ "force", FLAG_FORCE, false },
	{ "cache-size", FLAG_CACHE_SIZE, true },
	{ "block-size", FLAG_BLOCK_SIZE, true },
	{ "erase-block-size", FLAG_ERASE_SIZE, true },
	{ "option", FLAG_OPTION, true },	/* also -o */
	{ "watch", FLAG_WATCH, true },
	{ "count", FLAG_COUNT, true },
	{ "health", FLAG_HEALTH, false },
	{ "clean", FLAG_CLEAN, false },
	{ "interval", FLAG_INTERVAL, true },
	{ "prometheus", FLAG_PROMETHEUS, false },
};

/* getopt_long's val of opts[k]: above every short option character */
#define OPT_VAL(k)	(256 + (int)(k))

struct call;

struct cmd {
	const char *name;
	int min_args, max_args;
	unsigned int flags;	/* options the command accepts */
	int (*fn)(const struct call *a);
	const char *msg;	/* cmd_message: first word, NULL for set */
};

/* One parsed command line: positional arguments and options */
struct call {
	const struct cmd *c;
	char **arg;
	int nr;
	unsigned int flags;
	const char *value[ARRAY_SIZE(opts)];	/* of options with one */
	char **kv;		/* every --option / -o value, in order */
	int nr_kv;
};

static const char usage_text[] =
	"Usage: wowctl COMMAND [ARGS]\n"
	"\n"
	"Commands:\n"
	"  create NAME ORIGIN CACHE [-o KEY=VALUE]... [--force] [--dry-run]\n"
	"                          a wow device over the whole ORIGIN; every\n"
	"                          option checked as the kernel would first\n"
	"                          (-o block_size=8K,policy=cscan; format over\n"
	"                          a cache with dirty data only with --force)\n"
	"  remove [--clean] DEV    remove DEV (--clean: clean it first, remove\n"
	"                          only once nothing is dirty)\n"
	"  clean [--interval S] DEV\n"
	"                          cleaner mode on, wait until nothing is dirty\n"
	"                          (progress: dirty left, MiB/s, ETA); cleaner\n"
	"                          mode stays on, also when interrupted\n"
	"  status [--json] [--watch S [--count N]] [--health] [DEV...]\n"
	"                          status of each DEV, or of every wow device:\n"
	"                          fields, derived figures, rates (--watch),\n"
	"                          effective tunables\n"
	"  status --prometheus [--health] [DEV...]\n"
	"                          the status fields as Prometheus metrics (text\n"
	"                          format, for node_exporter's textfile collector)\n"
	"  table DEV               table options of DEV, by name\n"
	"  set DEV OPTION VALUE    change a runtime tunable\n"
	"  cleaner DEV on|off      destage everything, stop caching writes\n"
	"  commit DEV              make every completed write durable now\n"
	"  clear-stats DEV         reset the statistics counters\n"
	"  fields [--rst|--json]   list the status fields and their meaning\n"
	"  help                    show this help\n"
	"\n"
	"Offline, on a cache device (or image) no wow device is using:\n"
	"  check CACHE             check the superblock, health block, checkpoint\n"
	"                          and every log record, as a load would\n"
	"  dump [--scan] CACHE     JSON: superblock, health, checkpoint, segments\n"
	"                          and records, and the index a load rebuilds\n"
	"                          (--scan: from the log even when the\n"
	"                          checkpoint is valid)\n"
	"  writeback [--dry-run] [--force] [--scan] CACHE ORIGIN\n"
	"                          copy every dirty block to ORIGIN\n"
	"  metadata-size --cache-size BYTES [--block-size B]\n"
	"                [--erase-block-size E] [--json]\n"
	"                          metadata layout and RAM of a cache of that size\n"
	"\n"
	"DEV is a device-mapper name or /dev/mapper/NAME.  Sizes take a K, M, G\n"
	"or T suffix (powers of 1024).\n"
	"Exit status: 0 success (check: clean), 1 error (cannot open, read or\n"
	"write; no such device; the kernel refused: its reason is printed),\n"
	"2 usage error; check, dump and writeback: 3 warnings only (such\n"
	"as a torn tail record that a load drops, or needs_check), 4 errors (such\n"
	"as a corrupt record a later record proves durable, which the kernel\n"
	"refuses to load, a bad superblock, a checkpoint that does not check, or\n"
	"blocks writeback could not recover); status --health: 3 a device is\n"
	"degraded (read_only, or needs_check), 4 a device failed; clean and\n"
	"remove --clean: 130 interrupted (the device is intact and usable).\n";

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("wowctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'wowctl --help'.\n", stderr);
	return EXIT_USAGE;
}

static int error(const char *msg)
{
	fprintf(stderr, "wowctl: %s\n", msg);
	return EXIT_FAILURE;
}

static const char *short_name(const char *dev)
{
	return strncmp(dev, "/dev/mapper/", 12) ? dev : dev + 12;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* SIGINT and SIGTERM set interrupted and cut a sleep short. */
static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };

	if (!interrupted)
		nanosleep(&ts, NULL);
}

/* SECONDS, > 0, a decimal fraction allowed */
static int parse_seconds(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = s ? strtod(s, &end) : 0;
	return s && !errno && end != s && !*end && *v > 0 && *v < 1e6 ?
	       0 : -EINVAL;
}

static const char *opt_value(const struct call *a, unsigned int flag)
{
	size_t k;

	for (k = 0; k < ARRAY_SIZE(opts); k++)
		if (opts[k].flag == flag && a->value[k])
			return a->value[k];
	return NULL;
}

static int health_exit(enum wow_health_level h)
{
	return h == WOW_HEALTH_FAILED ? EXIT_FAILED :
	       h == WOW_HEALTH_DEGRADED ? EXIT_DEGRADED : 0;
}

static void free_names(char **names, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		free(names[i]);
	free(names);
}

static int cmd_status(const struct call *a)
{
	/* JSON: an array, but an object alone for one DEV named */
	unsigned int show = (a->flags & FLAG_PROMETHEUS) ? WOW_SHOW_PROMETHEUS :
			    !(a->flags & FLAG_JSON) ? 0 :
			    a->nr ? WOW_SHOW_JSON :
			    WOW_SHOW_JSON | WOW_SHOW_ARRAY;
	enum wow_health_level worst = WOW_HEALTH_OK;
	struct wow_samples samples = { 0 };
	char err[WOW_ERR_LEN], **names;
	double interval = 0, t0 = now_s();
	long count = 0, n;
	bool tty = isatty(STDOUT_FILENO);
	size_t nr;
	int ret = 0, r;

	if ((a->flags & FLAG_PROMETHEUS) &&
	    (a->flags & (FLAG_JSON | FLAG_WATCH)))
		return usage_error("status: --prometheus takes neither --json nor --watch");
	if ((a->flags & FLAG_WATCH) &&
	    parse_seconds(opt_value(a, FLAG_WATCH), &interval))
		return usage_error("status: --watch takes SECONDS > 0, not '%s'",
				   opt_value(a, FLAG_WATCH));
	if (a->flags & FLAG_COUNT) {
		char *end;

		count = strtol(opt_value(a, FLAG_COUNT), &end, 10);
		if (*end || count < 1 || !(a->flags & FLAG_WATCH))
			return usage_error("status: --count takes N >= 1, with --watch");
	}
	if (a->flags & FLAG_WATCH)
		catch_signals();
	for (n = 0; !interrupted; n++) {
		double t = now_s();

		if (a->nr) {
			for (nr = 0; nr < (size_t)a->nr; nr++)
				a->arg[nr] = (char *)short_name(a->arg[nr]);
			names = a->arg;
			nr = a->nr;
		} else if (wow_dm_list(&names, &nr, err)) {
			ret = error(err);
			break;
		} else if (!nr && !show && !n) {
			fputs("wowctl: no wow devices\n", stderr);
		}
		if (n && !show)
			fputs(tty ? "\033[H\033[2J" : "\n", stdout);
		if ((a->flags & FLAG_WATCH) && !show)
			printf("wowctl status, every %g s (%.0f s)\n\n",
			       interval, t - t0);
		worst = WOW_HEALTH_OK;
		r = wow_show(stdout, stderr, names, nr, show, wow_dm_fetch,
			     NULL, (a->flags & FLAG_WATCH) ? &samples : NULL,
			     t, &worst);
		if (!a->nr)
			free_names(names, nr);
		ret = r ? EXIT_FAILURE : 0;
		if (!(a->flags & FLAG_WATCH) || (count && n + 1 >= count))
			break;
		sleep_s(interval - (now_s() - t));
	}
	wow_samples_free(&samples);
	if ((a->flags & FLAG_HEALTH) && health_exit(worst))
		return health_exit(worst);
	return ret;
}

static int cmd_table(const struct call *a)
{
	char err[WOW_ERR_LEN], *params;
	struct wow_table t;

	if (wow_dm_params(a->arg[0], true, &params, err))
		return error(err);
	if (wow_table_parse(params, &t, err)) {
		fprintf(stderr, "wowctl: %s: bad table line '%s': %s\n",
			a->arg[0], params, err);
		free(params);
		return EXIT_FAILURE;
	}
	free(params);
	wow_print_table_text(stdout, &t);
	wow_table_free(&t);
	return 0;
}

static bool one_word(const char *s)
{
	return *s && !strpbrk(s, " \t\n");
}

/* set, cleaner, commit, clear-stats: send one message to the device */
static int cmd_message(const struct call *a)
{
	char err[WOW_ERR_LEN], *msg, *resp;
	int i, r;

	for (i = 1; i < a->nr; i++)
		if (!one_word(a->arg[i]))
			return usage_error("%s: '%s' is not one word",
					   a->c->name, a->arg[i]);
	if (!strcmp(a->c->name, "cleaner") && strcmp(a->arg[1], "on") &&
	    strcmp(a->arg[1], "off"))
		return usage_error("cleaner: expected on or off, not '%s'",
				   a->arg[1]);
	if (!a->c->msg) {	/* set DEV OPTION VALUE */
		char val[24];
		int id = wow_opt_lookup(a->arg[1]);

		/* sizes with a suffix; options fixed at create are named */
		if (id >= 0 && wow_tunable_value(a->arg[1], a->arg[2], val, err))
			return error(err);
		r = asprintf(&msg, "%s %s", a->arg[1], id >= 0 ? val : a->arg[2]);
	}
	else if (a->nr == 2)
		r = asprintf(&msg, "%s %s", a->c->msg, a->arg[1]);
	else
		r = asprintf(&msg, "%s", a->c->msg);
	if (r < 0)
		return error("out of memory");
	r = wow_dm_message(a->arg[0], msg, &resp, err);
	free(msg);
	if (r)
		return error(err);
	if (resp)
		puts(resp);
	free(resp);
	return 0;
}

/* ---- create ---- */

/* -o KEY=VALUE,KEY=VALUE... into @t */
static int add_options(const struct call *a, struct wow_table *t, char *err)
{
	char *copy, *save, *tok;
	int i, r = 0;

	for (i = 0; i < a->nr_kv && !r; i++) {
		copy = strdup(a->kv[i]);
		if (!copy)
			return -ENOMEM;
		for (tok = strtok_r(copy, ",", &save); tok && !r;
		     tok = strtok_r(NULL, ",", &save))
			r = wow_table_add_option(t, tok, err);
		free(copy);
	}
	return r;
}

static const char *dev_note(const struct wow_dev *d)
{
	return strcmp(d->stable, d->path) ? d->stable : "no /dev/disk/by-id link";
}

static int cmd_create(const struct call *a)
{
	const char *name = a->arg[0];
	struct wow_dev origin, cache;
	struct wow_table t = { 0 };
	char err[WOW_ERR_LEN], *params = NULL;
	struct wow_plan plan;
	int ret = EXIT_FAILURE, count, i;

	if (strchr(name, '/') || strlen(name) >= 128 || !*name)
		return usage_error("create: '%s' is not a device-mapper name",
				   name);
	/* the options alone first, as the kernel parses them */
	if (add_options(a, &t, err) || wow_table_check(&t, NULL, err))
		return usage_error("create: %s", err);
	if (!(a->flags & FLAG_DRY_RUN) && !wow_dm_open_count(name, &count, NULL))
		return error("a device-mapper device of that name exists");
	if (wow_dev_probe(a->arg[1], NULL, &origin, err))
		return error(err);
	if (wow_dev_probe(a->arg[2], NULL, &cache, err)) {
		wow_dev_free(&origin);
		return error(err);
	}
	if (wow_plan_make(&t, &origin, &cache,
			  (a->flags & FLAG_FORCE) ? WOW_PLAN_FORCE : 0, &plan,
			  err)) {
		fprintf(stderr, "wowctl: %s: not created: %s\n", name, err);
		goto out;
	}
	printf("origin %s (%s)\ncache  %s (%s)\n", origin.path,
	       dev_note(&origin), cache.path, dev_note(&cache));
	switch (plan.cache) {
	case WOW_PLAN_BLANK:
		puts("the cache device is blank: the kernel formats it");
		break;
	case WOW_PLAN_REOPEN:
		printf("the cache device holds a dm-wow cache: reopened, %"
		       PRIu64 " dirty blocks%s\n", plan.dirty_blocks,
		       plan.dirty_known ? "" : " (or more: 'wowctl check' it)");
		for (i = 0; i < WOW_NR_OPTS; i++)
			if (plan.adopted & (1U << i))
				printf("%s %" PRIu64 " taken from its superblock\n",
				       wow_opts[i].name, plan.t.val[i]);
		break;
	case WOW_PLAN_FORMAT:
		printf("format: the cache device is initialised%s\n",
		       plan.dirty_blocks ? " (--force: its dirty data is lost)" :
		       " (what it held is lost)");
		break;
	}
	params = wow_table_format(&plan.t);
	if (!params) {
		error("out of memory");
		goto out_plan;
	}
	printf("table  0 %" PRIu64 " wow %s\n", plan.sectors, params);
	fflush(stdout);
	if (a->flags & FLAG_DRY_RUN) {
		ret = 0;
		goto out_plan;
	}
	if (wow_dm_create(name, plan.sectors, params, err)) {
		error(err);
		goto out_plan;
	}
	printf("created /dev/mapper/%s (%.1f MiB)\n", name,
	       plan.sectors / 2048.0);
	ret = 0;
out_plan:
	free(params);
	wow_plan_free(&plan);
out:
	wow_table_free(&t);
	wow_dev_free(&origin);
	wow_dev_free(&cache);
	return ret;
}

/* ---- clean, remove ---- */

static int read_status(const char *dev, struct wow_status *st, char *err)
{
	char *params, e2[WOW_ERR_LEN];
	int r;

	r = wow_dm_params(dev, false, &params, err);
	if (r)
		return r;
	r = wow_status_parse(params, st, e2);
	if (r)
		snprintf(err, WOW_ERR_LEN, "%.40s: bad status line: %.180s", dev,
			 e2);
	free(params);
	return r;
}

static void fmt_eta(char *buf, size_t len, double s)
{
	if (!(s >= 0) || s > 99 * 3600)
		snprintf(buf, len, "--:--");
	else if (s >= 3600)
		snprintf(buf, len, "%d:%02d:%02d", (int)s / 3600,
			 (int)s / 60 % 60, (int)s % 60);
	else
		snprintf(buf, len, "%d:%02d", (int)s / 60, (int)s % 60);
}

struct progress {
	double t0;
	uint64_t dirty0, destaged0, bs;
};

/* One progress report: a redrawn bar on a terminal, else a line. */
static void show_progress(const char *dev, const struct progress *p,
			  const struct wow_status *st, bool tty)
{
	double el = now_s() - p->t0, done, pct, mib_s = 0, eta = -1;
	char eta_s[16], bar[33];
	int i, fill;

	done = (double)p->dirty0 - (double)st->dirty_blocks;
	pct = p->dirty0 ? 100 * done / p->dirty0 : 100;
	if (pct < 0)
		pct = 0;
	if (el > 0 && st->destage_blocks >= p->destaged0)
		mib_s = (st->destage_blocks - p->destaged0) * (double)p->bs /
			(1 << 20) / el;
	if (el > 0 && done > 0)
		eta = st->dirty_blocks / (done / el);
	fmt_eta(eta_s, sizeof(eta_s), eta);
	if (!tty) {
		printf("%s: %" PRIu64 " dirty blocks (%.1f MiB) left, %.0f%% "
		       "done, %.1f MiB/s, ETA %s\n", dev, st->dirty_blocks,
		       st->dirty_blocks * (double)p->bs / (1 << 20), pct, mib_s,
		       eta_s);
		fflush(stdout);
		return;
	}
	fill = (int)(pct * 32 / 100);
	for (i = 0; i < 32; i++)
		bar[i] = i < fill ? '#' : '-';
	bar[32] = '\0';
	printf("\r\033[K%s [%s] %3.0f%% %" PRIu64 " dirty (%.1f MiB) %.1f "
	       "MiB/s ETA %s", dev, bar, pct, st->dirty_blocks,
	       st->dirty_blocks * (double)p->bs / (1 << 20), mib_s, eta_s);
	fflush(stdout);
}

/* Are the dirty blocks left only blocks destage refused as bad? */
static bool only_bad(const struct wow_status *st)
{
	return wow_status_has(st, WOW_F_BAD_BLOCKS) && st->bad_blocks &&
	       st->dirty_blocks <= st->bad_blocks && !st->destage_inflight;
}

static void error_msg(const char *dev, const struct wow_status *st)
{
	fprintf(stderr, "wowctl: %s: %" PRIu64 " dirty blocks left are bad "
		"(bad_blocks=%" PRIu64 ": their data on the cache device does "
		"not match their crc32c; the kernel log names them): they are "
		"never destaged. Write them again (or discard them) to replace "
		"them, or reload with 'format' to give them up\n", dev,
		st->dirty_blocks, st->bad_blocks);
}

/*
 * Cleaner mode on, then wait until dirty_blocks is 0, showing progress
 * every @interval seconds.  Returns 0 (clean), EXIT_FAILURE (also when
 * only bad blocks are left), or EXIT_INTERRUPTED (cleaner mode left on,
 * the device untouched).
 */
static int clean_dev(const char *dev, double interval)
{
	bool tty = isatty(STDOUT_FILENO), drawn = false;
	char err[WOW_ERR_LEN], *resp;
	struct wow_status st;
	struct progress p;
	double last = 0;
	int stuck = 0;

	if (read_status(dev, &st, err))
		return error(err);
	if (st.state != WOW_STATE_CLEANING) {
		if (wow_dm_message(dev, "cleaner on", &resp, err)) {
			wow_status_free(&st);
			return error(err);
		}
		free(resp);
		printf("%s: cleaner mode on: destaging every dirty block, new "
		       "writes go to the origin\n", dev);
	}
	if (st.state == WOW_STATE_FAILED || st.state == WOW_STATE_READ_ONLY)
		printf("%s: state %s: destage drains what it can\n", dev,
		       wow_state_name(st.state));
	p.t0 = now_s();
	p.dirty0 = st.dirty_blocks;
	p.destaged0 = st.destage_blocks;
	p.bs = st.block_size;
	catch_signals();
	for (;;) {
		if (st.dirty_blocks == 0 || interrupted)
			break;
		/*
		 * what is left is blocks destage refused (their data does not
		 * match their crc32c), twice in a row: they never drain
		 */
		if (only_bad(&st)) {
			if (stuck++) {
				if (tty && drawn)
					putchar('\n');
				error_msg(dev, &st);
				wow_status_free(&st);
				return EXIT_FAILURE;
			}
		} else {
			stuck = 0;
		}
		if (!drawn || now_s() - last >= interval - 0.05) {
			show_progress(dev, &p, &st, tty);
			last = now_s();
			drawn = true;
		}
		sleep_s(tty ? (interval < 1 ? interval : 1) : interval);
		wow_status_free(&st);
		if (read_status(dev, &st, err)) {
			if (tty && drawn)
				putchar('\n');
			return error(err);
		}
	}
	if (tty && drawn) {
		show_progress(dev, &p, &st, tty);
		putchar('\n');
	}
	if (interrupted) {
		printf("wowctl: interrupted: %s is intact and usable, still in "
		       "cleaner mode (destaging on: %" PRIu64 " dirty blocks, "
		       "%.1f MiB, left); 'wowctl clean %s' waits again, "
		       "'wowctl cleaner %s off' resumes write-back caching\n",
		       dev, st.dirty_blocks,
		       st.dirty_blocks * (double)p.bs / (1 << 20), dev, dev);
		wow_status_free(&st);
		return EXIT_INTERRUPTED;
	}
	printf("%s: clean: 0 dirty blocks; %.1f MiB destaged in %.1f s; "
	       "cleaner mode stays on ('wowctl cleaner %s off' resumes "
	       "write-back caching)\n", dev,
	       (st.destage_blocks >= p.destaged0 ?
		st.destage_blocks - p.destaged0 : 0) * (double)p.bs / (1 << 20),
	       now_s() - p.t0, dev);
	wow_status_free(&st);
	return 0;
}

static int clean_interval(const struct call *a, double *iv)
{
	*iv = isatty(STDOUT_FILENO) ? 1 : 5;
	if ((a->flags & FLAG_INTERVAL) &&
	    parse_seconds(opt_value(a, FLAG_INTERVAL), iv))
		return usage_error("%s: --interval takes SECONDS > 0, not '%s'",
				   a->c->name, opt_value(a, FLAG_INTERVAL));
	return 0;
}

static int cmd_clean(const struct call *a)
{
	double iv;

	if (clean_interval(a, &iv))
		return EXIT_USAGE;
	return clean_dev(a->arg[0], iv);
}

static int cmd_remove(const struct call *a)
{
	const char *dev = a->arg[0];
	char err[WOW_ERR_LEN], *tline = NULL;
	struct wow_status st;
	struct wow_table t;
	int count, r, tries;
	bool have_t = false;
	double iv;

	if (clean_interval(a, &iv))
		return EXIT_USAGE;
	if (wow_dm_params(dev, true, &tline, err))
		return error(err);
	have_t = !wow_table_parse(tline, &t, NULL);
	free(tline);
	if (have_t) {	/* for the messages: paths, not numbers */
		char *o = wow_dev_describe(t.origin);
		char *c = wow_dev_describe(t.cache);

		if (o && c) {
			free(t.origin);
			free(t.cache);
			t.origin = o;
			t.cache = c;
		} else {
			free(o);
			free(c);
		}
	}
	for (tries = 0;; tries++) {
		r = wow_dm_open_count(dev, &count, err);
		if (!r && count) {
			snprintf(err, sizeof(err), "%s: in use (open %d times: "
				 "mounted, or held by another device); not "
				 "removed", dev, count);
			r = -EBUSY;
		}
		if (!r && (a->flags & FLAG_CLEAN)) {
			r = clean_dev(dev, iv);
			if (r) {
				if (r == EXIT_INTERRUPTED || r == EXIT_FAILURE)
					printf("wowctl: %s not removed\n", dev);
				goto out;
			}
		}
		/* suspended: no new writes, every completed one committed */
		if (r || (r = wow_dm_suspend(dev, true, err)))
			break;
		r = read_status(dev, &st, err);
		if (r)
			break;
		if (!(a->flags & FLAG_CLEAN) || !st.dirty_blocks || tries >= 100)
			break;
		/* written to since: clean again */
		wow_status_free(&st);
		if ((r = wow_dm_suspend(dev, false, err)))
			break;
	}
	if (!r && (a->flags & FLAG_CLEAN) && st.dirty_blocks) {
		wow_status_free(&st);
		snprintf(err, sizeof(err), "%s: still dirty after cleaning "
			 "(written to while cleaning?); not removed", dev);
		r = -EAGAIN;
	}
	if (!r) {
		r = wow_dm_remove(dev, err);
		if (r)
			wow_status_free(&st);
	}
	if (r) {
		wow_dm_suspend(dev, false, NULL);	/* as it was */
		error(err);
		r = EXIT_FAILURE;
		goto out;
	}
	if (st.dirty_blocks)
		printf("%s removed; its cache %s keeps %" PRIu64 " dirty blocks "
		       "(%.1f MiB) not yet on the origin %s: they are safe "
		       "there (persistent) and are used again when the device "
		       "is created with the same origin and cache.  Until then "
		       "the origin alone is stale: do not mount it ('wowctl "
		       "writeback' copies the blocks to it)\n", dev,
		       have_t ? t.cache : "device", st.dirty_blocks,
		       st.dirty_blocks * (double)st.block_size / (1 << 20),
		       have_t ? t.origin : "device");
	else
		printf("%s removed; nothing was dirty: the origin%s%s holds "
		       "every block\n", dev, have_t ? " " : "",
		       have_t ? t.origin : "");
	wow_status_free(&st);
out:
	if (have_t)
		wow_table_free(&t);
	return r;
}

static int cmd_fields(const struct call *a)
{
	if ((a->flags & FLAG_JSON) && (a->flags & FLAG_RST))
		return usage_error("fields: --rst and --json exclude each other");
	if (a->flags & FLAG_RST)
		wow_print_fields_rst(stdout);
	else if (a->flags & FLAG_JSON)
		wow_print_fields_json(stdout);
	else
		wow_print_fields_text(stdout);
	return 0;
}

static int parse_size(const char *s, uint64_t *v)
{
	return wow_parse_size(s, v);
}

static int cmd_check(const struct call *a)
{
	return wowc_check(a->arg[0], stdout, stderr);
}

static int cmd_dump(const struct call *a)
{
	return wowc_dump(a->arg[0], a->flags & FLAG_SCAN ? WOWC_SCAN : 0,
			 stdout, stderr);
}

static int cmd_writeback(const struct call *a)
{
	unsigned int f = 0;

	if (a->flags & FLAG_DRY_RUN)
		f |= WOWC_WB_DRY_RUN;
	if (a->flags & FLAG_FORCE)
		f |= WOWC_WB_FORCE;
	if (a->flags & FLAG_SCAN)
		f |= WOWC_SCAN;
	return wowc_writeback(a->arg[0], a->arg[1], f, stdout, stderr, NULL);
}

static int cmd_metadata_size(const struct call *a)
{
	uint64_t size, bs = 4096, ebs = 1048576;	/* dm-wow-args.c */
	char err[WOWC_ERR_LEN];
	struct wowc_msize m;

	if (!(a->flags & FLAG_CACHE_SIZE))
		return usage_error("metadata-size: --cache-size is required");
	if (parse_size(opt_value(a, FLAG_CACHE_SIZE), &size))
		return usage_error("metadata-size: bad --cache-size '%s'",
				   opt_value(a, FLAG_CACHE_SIZE));
	if ((a->flags & FLAG_BLOCK_SIZE) &&
	    (parse_size(opt_value(a, FLAG_BLOCK_SIZE), &bs) ||
	     bs > UINT32_MAX))
		return usage_error("metadata-size: bad --block-size '%s'",
				   opt_value(a, FLAG_BLOCK_SIZE));
	if ((a->flags & FLAG_ERASE_SIZE) &&
	    (parse_size(opt_value(a, FLAG_ERASE_SIZE), &ebs) ||
	     ebs > UINT32_MAX))
		return usage_error("metadata-size: bad --erase-block-size '%s'",
				   opt_value(a, FLAG_ERASE_SIZE));
	if (wowc_msize(size, bs, ebs, &m, err))
		return usage_error("metadata-size: %s", err);
	wowc_msize_print(stdout, &m, a->flags & FLAG_JSON);
	return 0;
}

static int cmd_help(const struct call *a)
{
	(void)a;
	fputs(usage_text, stdout);
	return 0;
}

static const struct cmd cmds[] = {
	{ "create", 3, 3, FLAG_OPTION | FLAG_FORCE | FLAG_DRY_RUN, cmd_create,
	  NULL },
	{ "remove", 1, 1, FLAG_CLEAN | FLAG_INTERVAL, cmd_remove, NULL },
	{ "clean", 1, 1, FLAG_INTERVAL, cmd_clean, NULL },
	{ "status", 0, 1 << 20, FLAG_JSON | FLAG_WATCH | FLAG_COUNT |
	  FLAG_HEALTH | FLAG_PROMETHEUS, cmd_status, NULL },
	{ "table", 1, 1, 0, cmd_table, NULL },
	{ "set", 3, 3, 0, cmd_message, NULL },
	{ "cleaner", 2, 2, 0, cmd_message, "cleaner" },
	{ "commit", 1, 1, 0, cmd_message, "commit" },
	{ "clear-stats", 1, 1, 0, cmd_message, "clear_stats" },
	{ "fields", 0, 0, FLAG_JSON | FLAG_RST, cmd_fields, NULL },
	{ "check", 1, 1, 0, cmd_check, NULL },
	{ "dump", 1, 1, FLAG_SCAN, cmd_dump, NULL },
	{ "writeback", 2, 2, FLAG_DRY_RUN | FLAG_FORCE | FLAG_SCAN,
	  cmd_writeback, NULL },
	{ "metadata-size", 0, 0, FLAG_CACHE_SIZE | FLAG_BLOCK_SIZE |
	  FLAG_ERASE_SIZE | FLAG_JSON, cmd_metadata_size, NULL },
	{ "help", 0, 0, 0, cmd_help, NULL },
	{ "--help", 0, 0, 0, cmd_help, NULL },
	{ "-h", 0, 0, 0, cmd_help, NULL },
};

static size_t opt_index(unsigned int flag)
{
	size_t k = 0;

	while (opts[k].flag != flag)
		k++;
	return k;
}

/*
 * The getopt_long table of the options @c accepts (ending in a zeroed
 * entry), and its short options: ":" (a missing value is reported as ':',
 * not '?') and "o:" when it takes -o.
 */
static void cmd_longopts(const struct cmd *c, struct option *lo, char *so)
{
	size_t k, n = 0;

	for (k = 0; k < ARRAY_SIZE(opts); k++)
		if (c->flags & opts[k].flag)
			lo[n++] = (struct option){
				opts[k].name,
				opts[k].value ? required_argument : no_argument,
				NULL, OPT_VAL(k) };
	lo[n] = (struct option){ 0 };
	strcpy(so, (c->flags & FLAG_OPTION) ? ":o:" : ":");
}

/*
 * Parse the options of command @c in @argv (argv[0] the command name) into
 * @a: options may sit anywhere, before, between or after the positional
 * arguments, until "--".  Returns 0, or EXIT_USAGE with the message shown.
 */
static int parse_call(const struct cmd *c, int argc, char **argv,
		      struct call *a)
{
	struct option lo[ARRAY_SIZE(opts) + 1];
	char so[4];
	int ch, k;

	cmd_longopts(c, lo, so);
	opterr = 0;	/* our messages, not getopt's */
	optind = 1;
	while ((ch = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		/* the option just read: its value, if any, may follow it */
		const char *word = argv[optind - 1];

		if (ch == 'o')
			ch = OPT_VAL(opt_index(FLAG_OPTION));
		k = ch - OPT_VAL(0);
		if (ch == ':')	/* a value missing: optopt is its val */
			return usage_error("%s: option '%s%s' needs a value",
					   c->name, optopt == 'o' ? "-" : "--",
					   optopt == 'o' ? "o" :
					   opts[optopt - OPT_VAL(0)].name);
		if (ch == '?' && optopt >= OPT_VAL(0))	/* --flag=VALUE */
			return usage_error("%s: option '--%s' takes no value",
					   c->name,
					   opts[optopt - OPT_VAL(0)].name);
		if (ch == '?' && optopt)
			return usage_error("%s: unknown option '-%c'", c->name,
					   optopt);
		if (ch == '?')
			return usage_error("%s: unknown option '%s'", c->name,
					   word);
		a->flags |= opts[k].flag;
		a->value[k] = optarg;
		if (opts[k].flag == FLAG_OPTION)
			a->kv[a->nr_kv++] = optarg;
	}
	/* getopt_long moved the positional arguments to the end, in order */
	a->arg = argv + optind;
	a->nr = argc - optind;
	if (a->nr < c->min_args || a->nr > c->max_args)
		return usage_error("%s: wrong number of arguments", c->name);
	a->c = c;
	return 0;
}

int main(int argc, char **argv)
{
	struct call a = { 0 };
	const struct cmd *c = NULL;
	char *kv[argc];
	size_t k;

	a.kv = kv;
	wow_dm_quiet();
	if (argc < 2)
		return usage_error("no command given");
	for (k = 0; k < ARRAY_SIZE(cmds); k++)
		if (!strcmp(cmds[k].name, argv[1]))
			c = &cmds[k];
	if (!c)
		return usage_error("unknown command '%s'", argv[1]);
	if (parse_call(c, argc - 1, argv + 1, &a))
		return EXIT_USAGE;
	return c->fn(&a);
}
