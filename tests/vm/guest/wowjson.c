// SPDX-License-Identifier: GPL-2.0
/*
 * wowjson: a strict JSON (RFC 8259) checker and value picker for the test
 * guest, which has neither jq nor python3.
 *
 *   wowjson [-l] [PATH...] < FILE
 *
 * Checks that the input is one JSON value (with -l: one per non-empty
 * line, JSON Lines; PATHs then apply to the last one) and prints the value
 * at each PATH on a line of its own: strings without their quotes (escapes
 * left as they are), numbers, true, false and null as written, objects and
 * arrays as their text.  A PATH is members and array indexes joined by
 * dots: "0.name", "tunables.max_age.value"; "." is the whole value and
 * "#" after a path gives the number of members or elements ("#" alone: of
 * the whole value).
 * Exit status: 0 ok, 1 not valid JSON (the offset and what was expected on
 * stderr), 2 a PATH not found, 3 usage.
 *
 * userspace/tests/test_libwow.c includes this file (WOWJSON_NO_MAIN) to
 * check wowctl's JSON with the same rules.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WJ_MAX_DEPTH	64

struct wj {
	const char *s, *end, *p;
	const char *why;	/* first error */
	int depth;
};

static void wj_ws(struct wj *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' ||
				 *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static bool wj_fail(struct wj *j, const char *why)
{
	if (!j->why)
		j->why = why;
	return false;
}

static bool wj_lit(struct wj *j, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, lit, n))
		return wj_fail(j, "a value");
	j->p += n;
	return true;
}

static bool wj_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	       (c >= 'A' && c <= 'F');
}

static bool wj_string(struct wj *j)
{
	unsigned char c;
	int i;

	if (j->p >= j->end || *j->p != '"')
		return wj_fail(j, "a string");
	for (j->p++; j->p < j->end; j->p++) {
		c = *j->p;
		if (c == '"') {
			j->p++;
			return true;
		}
		if (c < 0x20)
			return wj_fail(j, "no control character in a string");
		if (c != '\\')
			continue;
		if (++j->p >= j->end)
			break;
		c = *j->p;
		if (c == 'u') {
			for (i = 1; i <= 4; i++)
				if (j->p + i >= j->end || !wj_hex(j->p[i]))
					return wj_fail(j, "4 hex digits after \\u");
			j->p += 4;
		} else if (!strchr("\"\\/bfnrt", c)) {
			return wj_fail(j, "a valid escape");
		}
	}
	return wj_fail(j, "the end of a string");
}

static bool wj_digits(struct wj *j)
{
	const char *q = j->p;

	while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
		j->p++;
	return j->p > q;
}

static bool wj_number(struct wj *j)
{
	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (j->p < j->end && *j->p == '0')
		j->p++;
	else if (!wj_digits(j))
		return wj_fail(j, "a value");
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (!wj_digits(j))
			return wj_fail(j, "digits after '.'");
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (!wj_digits(j))
			return wj_fail(j, "digits in an exponent");
	}
	return true;
}

static bool wj_value(struct wj *j);

/* object or array; open is '{' or '[' */
static bool wj_compound(struct wj *j, char open)
{
	char close = open == '{' ? '}' : ']';

	if (++j->depth > WJ_MAX_DEPTH)
		return wj_fail(j, "less nesting");
	j->p++;
	wj_ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		j->depth--;
		return true;
	}
	for (;;) {
		wj_ws(j);
		if (open == '{') {
			if (!wj_string(j))
				return wj_fail(j, "a member name");
			wj_ws(j);
			if (j->p >= j->end || *j->p != ':')
				return wj_fail(j, "':'");
			j->p++;
		}
		if (!wj_value(j))
			return false;
		wj_ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == close) {
			j->p++;
			j->depth--;
			return true;
		}
		return wj_fail(j, open == '{' ? "',' or '}'" : "',' or ']'");
	}
}

static bool wj_value(struct wj *j)
{
	wj_ws(j);
	if (j->p >= j->end)
		return wj_fail(j, "a value");
	switch (*j->p) {
	case '{':
	case '[':
		return wj_compound(j, *j->p);
	case '"':
		return wj_string(j);
	case 't':
		return wj_lit(j, "true");
	case 'f':
		return wj_lit(j, "false");
	case 'n':
		return wj_lit(j, "null");
	default:
		return wj_number(j);
	}
}

/*
 * Check that [s, s + len) is exactly one JSON value (white space around
 * it allowed).  Returns true, or false with *off and *why set.
 */
static bool wowjson_check(const char *s, size_t len, size_t *off,
			  const char **why)
{
	struct wj j = { .s = s, .end = s + len, .p = s };

	if (wj_value(&j)) {
		wj_ws(&j);
		if (j.p == j.end)
			return true;
		wj_fail(&j, "the end of the input");
	}
	*off = j.p - s;
	*why = j.why;
	return false;
}

/*
 * The value at PATH in the valid JSON text [s, s + len): *vs and *vlen
 * (strings with their quotes).  Returns false when it is not there.
 */
static bool wowjson_get(const char *s, size_t len, const char *path,
			const char **vs, size_t *vlen)
{
	struct wj j = { .s = s, .end = s + len, .p = s };
	const char *seg = path, *dot;
	size_t n;
	long idx;

	wj_ws(&j);
	while (*seg && strcmp(seg, ".")) {
		dot = strchr(seg, '.');
		n = dot ? (size_t)(dot - seg) : strlen(seg);
		if (j.p >= j.end || (*j.p != '{' && *j.p != '['))
			return false;
		if (*j.p == '[') {
			char *e;

			idx = strtol(seg, &e, 10);
			if (e != seg + n || idx < 0)
				return false;
			j.p++;
			for (;; idx--) {
				wj_ws(&j);
				if (j.p < j.end && *j.p == ']')
					return false;
				if (!idx)
					break;
				if (!wj_value(&j))
					return false;
				wj_ws(&j);
				if (j.p < j.end && *j.p == ',')
					j.p++;
			}
		} else {
			j.p++;
			for (;;) {
				const char *k;

				wj_ws(&j);
				if (j.p >= j.end || *j.p == '}')
					return false;
				k = j.p;
				if (!wj_string(&j))
					return false;
				wj_ws(&j);
				j.p++;	/* ':' */
				wj_ws(&j);
				if (strncmp(k + 1, seg, n) == 0 && k[n + 1] == '"')
					break;
				if (!wj_value(&j))
					return false;
				wj_ws(&j);
				if (j.p < j.end && *j.p == ',')
					j.p++;
			}
		}
		seg = dot ? dot + 1 : seg + n;
	}
	wj_ws(&j);
	*vs = j.p;
	if (!wj_value(&j))
		return false;
	*vlen = j.p - *vs;
	return true;
}

/* Members or elements of the object or array at [vs, vs + vlen). */
static __attribute__((unused)) long wowjson_count(const char *vs, size_t vlen)
{
	struct wj j = { .s = vs, .end = vs + vlen, .p = vs + 1 };
	long n = 0;

	if (vlen < 2 || (*vs != '{' && *vs != '['))
		return -1;
	for (;;) {
		wj_ws(&j);
		if (j.p >= j.end || *j.p == '}' || *j.p == ']')
			return n;
		if (*vs == '{') {
			wj_string(&j);
			wj_ws(&j);
			j.p++;
		}
		if (!wj_value(&j))
			return -1;
		n++;
		wj_ws(&j);
		if (j.p < j.end && *j.p == ',')
			j.p++;
	}
}

#ifndef WOWJSON_NO_MAIN
static char *read_all(FILE *f, size_t *len)
{
	size_t cap = 65536, n = 0, r;
	char *buf = malloc(cap), *nb;

	while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap) {
			nb = realloc(buf, cap *= 2);
			if (!nb)
				free(buf);
			buf = nb;
		}
	}
	*len = n;
	return buf;
}

int main(int argc, char **argv)
{
	const char *why, *vs, *doc;
	size_t len, off, vlen, dlen;
	bool lines = false;
	char *buf;
	int i, rc = 0;

	if (argc > 1 && !strcmp(argv[1], "-l")) {
		lines = true;
		argv++;
		argc--;
	}
	buf = read_all(stdin, &len);
	if (!buf) {
		fputs("wowjson: out of memory\n", stderr);
		return 3;
	}
	doc = buf;
	dlen = len;
	if (lines) {
		const char *p = buf, *nl;
		int n = 0;

		for (; p < buf + len; p = nl + 1) {
			nl = memchr(p, '\n', buf + len - p);
			if (!nl)
				nl = buf + len;
			if (nl == p)
				continue;
			n++;
			if (!wowjson_check(p, nl - p, &off, &why)) {
				fprintf(stderr, "wowjson: line %d, offset %zu: expected %s\n",
					n, off, why);
				return 1;
			}
			doc = p;
			dlen = nl - p;
		}
		if (!n) {
			fputs("wowjson: no JSON lines\n", stderr);
			return 1;
		}
	} else if (!wowjson_check(buf, len, &off, &why)) {
		fprintf(stderr, "wowjson: offset %zu: expected %s (near '%.20s')\n",
			off, why, buf + (off < len ? off : len));
		return 1;
	}
	for (i = 1; i < argc; i++) {
		char *path = argv[i];
		size_t pl = strlen(path);
		bool count = pl && path[pl - 1] == '#';

		if (count) {
			path[pl - 1] = '\0';
			if (pl >= 2 && path[pl - 2] == '.')
				path[pl - 2] = '\0';
		}
		if (!wowjson_get(doc, dlen, path, &vs, &vlen)) {
			fprintf(stderr, "wowjson: no %s\n", argv[i]);
			rc = 2;
			continue;
		}
		if (count)
			printf("%ld\n", wowjson_count(vs, vlen));
		else if (*vs == '"')
			printf("%.*s\n", (int)vlen - 2, vs + 1);
		else
			printf("%.*s\n", (int)vlen, vs);
	}
	free(buf);
	return rc;
}
#endif
