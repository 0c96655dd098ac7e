// SPDX-License-Identifier: GPL-2.0
/*
 * wowctl: inspect and control dm-wow devices.  A thin CLI over libwow,
 * which parses the status and table lines, names every field and talks to
 * device-mapper.
 *
 * Exit status: 0 success, 1 error, 2 usage error.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "libwow.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define EXIT_USAGE	2
#define FLAG_JSON	(1U << 0)
#define FLAG_RST	(1U << 1)

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
	"DEV is a device-mapper name or /dev/mapper/NAME.\n"
	"Exit status: 0 success, 1 error, 2 usage error.\n";

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
	{ "help", 0, 0, 0, cmd_help, NULL },
	{ "--help", 0, 0, 0, cmd_help, NULL },
	{ "-h", 0, 0, 0, cmd_help, NULL },
};

int main(int argc, char **argv)
{
	struct call a = { .arg = argv };
	const struct cmd *c = NULL;
	bool opts = true;
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
		if (opts && !strcmp(argv[i], "--")) {
			opts = false;
		} else if (opts && !strcmp(argv[i], "--json") &&
			   (c->flags & FLAG_JSON)) {
			a.flags |= FLAG_JSON;
		} else if (opts && !strcmp(argv[i], "--rst") &&
			   (c->flags & FLAG_RST)) {
			a.flags |= FLAG_RST;
		} else if (opts && argv[i][0] == '-' && argv[i][1]) {
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
