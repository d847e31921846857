/*
 * shown.h
 *		A user's text or number as an error message quotes it (shown.c).
 */
#ifndef MTDPP_SHOWN_H
#define MTDPP_SHOWN_H

/* a user's text (a name, a key, a value) quoted in an error: at most this many bytes */
#define MTDPP_SHOWN_MAX			64

extern const char *mtdpp_shown(const char *s);
struct NumericData;
extern char *mtdpp_numeric_shown(struct NumericData *num);

#endif							/* MTDPP_SHOWN_H */
