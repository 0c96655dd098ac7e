/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * json: the one JSON writer of the userspace tools (libwow's status and
 * fields, wowcache's dump and metadata-size).  Strings are escaped per
 * RFC 8259: '"' and '\\' with a backslash, newline, carriage return and
 * tab as \n, \r, \t, every other control character and DEL as \u00XX;
 * other bytes (UTF-8) pass through.  The writer puts the commas between
 * members and elements itself; a container is written inline, or with each
 * member on a line of its own, indented.
 */
#ifndef WOW_JSON_H
#define WOW_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH	8

struct json {
	FILE *f;
	bool spaced;		/* ", " and ": " between, else "," and ":" */
	bool keyed;		/* a key written: its value comes next */
	int depth;
	struct {
		char close;	/* '}' or ']' */
		bool more;	/* a member written */
		int indent;	/* < 0 inline, else each member on a new line */
	} lv[JSON_MAX_DEPTH];
};

/* A writer to @f, spaced (", ", ": ") or compact (",", ":") */
void json_init(struct json *j, FILE *f, bool spaced);

/* @s quoted and escaped, to @f (no comma, no state) */
void json_string(FILE *f, const char *s);

/*
 * Open an object ('{') or an array ('['): @indent < 0 writes its members
 * inline; else each on a new line after @indent spaces, and the closing
 * bracket (of a container with members) on a new line, 2 spaces less.
 */
void json_open(struct json *j, char open, int indent);
void json_close(struct json *j);

/* A member's key; its value (a json_ value or json_open) follows. */
void json_key(struct json *j, const char *key);

void json_str(struct json *j, const char *s);	/* NULL: null */
void json_u64(struct json *j, uint64_t v);
void json_int(struct json *j, long long v);
void json_bool(struct json *j, bool v);
void json_null(struct json *j);
/* %.3f; null when not finite (JSON has no NaN or infinity) */
void json_double(struct json *j, double v);

#endif
