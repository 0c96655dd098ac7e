// SPDX-License-Identifier: GPL-2.0
/*
 * wowctl: inspect and control dm-wow devices.  A thin CLI over libwow,
 * which parses the status and table lines, names every field and talks to
 * device-mapper, and wowcache, which reads a cache device offline (check,
 * dump, writeback, metadata-size).
 *
 * Exit status: 0 success, 1 error, 2 usage error; the offline commands
 * also 3 (warnings only) and 4 (errors found).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "libwow.h"
#include "wowcache.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define EXIT_USAGE	2
#define FLAG_JSON	(1U << 0)
#define FLAG_RST	(1U << 1)
#define FLAG_SCAN	(1U << 2)
#define FLAG_DRY_RUN	(1U << 3)
#define FLAG_FORCE	(1U << 4)
#define FLAG_CACHE_SIZE	(1U << 5)	/* options with a value */
#define FLAG_BLOCK_SIZE	(1U << 6)
#define FLAG_ERASE_SIZE	(1U << 7)

/* Options: a flag, or one with a value (stored in struct call) */
static const struct opt {
	const char *name;
	unsigned int flag;
	bool value;
} opts[] = {
	{ "--json", FLAG_JSON, false },
	{ "--rst", FLAG_RST, false },
	{ "--scan", FLAG_SCAN, false },
	{ "--dry-run", FLAG_DRY_RUN, false },
	{ "--force", FLAG_FORCE, false },
	{ "--cache-size", FLAG_CACHE_SIZE, true },
	{ "--block-size", FLAG_BLOCK_SIZE, true },
	{ "--erase-block-size", FLAG_ERASE_SIZE, true },
};

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
};

static const char usage_text[] =
	"Usage: wowctl COMMAND [ARGS]\n"
	"\n"
	"Commands:\n"
	"  status [--json] [DEV]   status of DEV, or of every wow device\n"
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
	"write), 2 usage error; check, dump and writeback: 3 warnings only (such\n"
	"as a torn tail record that a load drops, or needs_check), 4 errors (such\n"
	"as a corrupt record a later record proves durable, which the kernel\n"
	"refuses to load, a bad superblock, a checkpoint that does not check, or\n"
	"blocks writeback could not recover).\n";

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

static int show_status(const char *dev, unsigned int flags)
{
	char err[WOW_ERR_LEN], *params;
	struct wow_status st;

	if (wow_dm_params(dev, false, &params, err))
		return error(err);
	if (wow_status_parse(params, &st, err)) {
		fprintf(stderr, "wowctl: %s: bad status line '%s': %s\n",
			dev, params, err);
		free(params);
		return EXIT_FAILURE;
	}
	free(params);
	if (flags & FLAG_JSON)
		wow_print_status_json(stdout, short_name(dev), &st);
	else
		wow_print_status_text(stdout, short_name(dev), &st);
	wow_status_free(&st);
	return 0;
}

static int cmd_status(const struct call *a)
{
	char err[WOW_ERR_LEN], **names;
	size_t i, nr;
	int ret = 0;

	if (a->nr == 1) {
		ret = show_status(a->arg[0], a->flags);
		if (!ret && (a->flags & FLAG_JSON))
			putchar('\n');
		return ret;
	}
	if (wow_dm_list(&names, &nr, err))
		ret = error(err);
	if (a->flags & FLAG_JSON)
		putchar('[');
	else if (!nr && !ret)
		fputs("wowctl: no wow devices\n", stderr);
	for (i = 0; i < nr; i++) {
		if (i)
			fputs((a->flags & FLAG_JSON) ? ",\n" : "\n", stdout);
		if (show_status(names[i], a->flags))
			ret = EXIT_FAILURE;
		free(names[i]);
	}
	free(names);
	if (a->flags & FLAG_JSON)
		puts("]");
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
	if (!a->c->msg)	/* set DEV OPTION VALUE */
		r = asprintf(&msg, "%s %s", a->arg[1], a->arg[2]);
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

static const char *opt_value(const struct call *a, unsigned int flag)
{
	size_t k;

	for (k = 0; k < ARRAY_SIZE(opts); k++)
		if (opts[k].flag == flag)
			return a->value[k];
	return NULL;
}

/* BYTES with an optional K, M, G or T (KiB, ...) suffix */
static int parse_size(const char *s, uint64_t *v)
{
	static const char *const sfx[] = { "", "K", "M", "G", "T" };
	char *end;
	size_t k;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	for (k = 0; k < ARRAY_SIZE(sfx); k++) {
		size_t n = strlen(sfx[k]);

		if (strncasecmp(end, sfx[k], n))
			continue;
		if (end[n] && strcasecmp(end + n, "iB") &&
		    (!n || strcasecmp(end + n, "B")))
			continue;
		if (k && *v > (UINT64_MAX >> (10 * k)))
			return -EINVAL;
		*v <<= 10 * k;
		return 0;
	}
	return -EINVAL;
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
	{ "status", 0, 1, FLAG_JSON, cmd_status, NULL },
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

int main(int argc, char **argv)
{
	struct call a = { .arg = argv };
	const struct cmd *c = NULL;
	bool in_opts = true;
	size_t k;
	int i;

	if (argc < 2)
		return usage_error("no command given");
	for (k = 0; k < ARRAY_SIZE(cmds); k++)
		if (!strcmp(cmds[k].name, argv[1]))
			c = &cmds[k];
	if (!c)
		return usage_error("unknown command '%s'", argv[1]);
	/* Options may sit anywhere; positional arguments move down. */
	for (i = 2; i < argc; i++) {
		const struct opt *o = NULL;
		const char *eq = strchr(argv[i], '=');
		size_t len = eq ? (size_t)(eq - argv[i]) : strlen(argv[i]);

		for (k = 0; in_opts && k < ARRAY_SIZE(opts); k++)
			if (!strncmp(argv[i], opts[k].name, len) &&
			    !opts[k].name[len] && (c->flags & opts[k].flag))
				o = &opts[k];
		if (in_opts && !strcmp(argv[i], "--")) {
			in_opts = false;
		} else if (o) {
			a.flags |= o->flag;
			if (o->value && eq)
				a.value[o - opts] = eq + 1;
			else if (o->value && i + 1 < argc)
				a.value[o - opts] = argv[++i];
			else if (o->value || eq)
				return usage_error("%s: option '%s' %s a value",
						   c->name, o->name,
						   o->value ? "needs" : "takes no");
		} else if (in_opts && argv[i][0] == '-' && argv[i][1]) {
			return usage_error("%s: unknown option '%s'", c->name,
					   argv[i]);
		} else {
			a.arg[a.nr++] = argv[i];
		}
	}
	if (a.nr < c->min_args || a.nr > c->max_args)
		return usage_error("%s: wrong number of arguments", c->name);
	a.c = c;
	return c->fn(&a);
}
