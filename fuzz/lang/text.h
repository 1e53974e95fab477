/* The text form of programs: a printer (bytes to text) and an assembler (text to bytes).
 *
 * One op a line: the mnemonic, then its operands separated by blanks (fuzz/lang/ops.h lists them):
 *
 *   # a cycle through two slots
 *   alloc s0 scan 2
 *   alloc s1 raw 3
 *   store s0.0 s1      # s0's field 0 points at s1
 *   store_imm s1.2 7
 *   param markstack 4
 *   collect full
 *
 * `#` starts a comment running to the end of the line; blank lines are ignored. Ops are
 * printable ASCII; a comment may hold any other byte too (UTF-8), but no control character
 * besides tab and CR. The assembler
 * writes canonical bytes, so text -> bytes -> text gives back the same ops (comments and spacing
 * aside), and a printed program assembles to bytes that run exactly as the original input.
 */
#ifndef FUZZ_TEXT_H
#define FUZZ_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fuzz/lang/ops.h"
#include "fuzz/lang/program.h"

/* Longest line the printer writes (without the newline). */
enum { FUZZ_OP_TEXT_MAX = 64 };

/* "alloc s3 scan 4" into buf; returns buf. */
const char *fuzz_op_format(const fuzz_op *op, char *buf, size_t buf_len);

/* Every op of the input (bytes of the target whose op set is `set`; NULL: graph), one a line.
 * With `numbered`, each line ends with a comment giving the op's number ("alloc s3 scan 4
 * # op 12"), so a report can point at lines and the text still assembles. Returns the number of
 * ops printed. */
size_t fuzz_print_program(FILE *out, const fuzz_opset *set, const uint8_t *data, size_t size,
                          int numbered);

/* A message quotes the token it refuses first and whole, then says what was expected; a token
 * longer than FUZZ_TEXT_TOKEN_MAX characters (no valid token is near it) is quoted that far,
 * with its length. The message has room for the longest such message. */
enum { FUZZ_TEXT_TOKEN_MAX = 512 };

typedef struct fuzz_text_error {
  size_t line, column; /* 1-based */
  char message[1024];
} fuzz_text_error;

/* Assemble `text` (len bytes, need not be NUL-terminated) into the canonical bytes of the target
 * whose op set is `set` (NULL: graph), appended to *out. An op the set does not have is an
 * error. Returns 1 on success; 0 on the first error, described in *err (out then holds the ops
 * before it). */
int fuzz_assemble(const fuzz_opset *set, const char *text, size_t len, fuzz_buf *out,
                  fuzz_text_error *err);

/* fuzz_assemble of the text file at `path`. Returns 0 when it cannot be read (err->line is then
 * 0 and err->message says so and why) or does not assemble. */
int fuzz_assemble_file(const fuzz_opset *set, const char *path, fuzz_buf *out,
                       fuzz_text_error *err);

/* Whether the input holds a byte that text never does: a control character but tab, CR, LF. */
int fuzz_text_has_control_byte(const uint8_t *data, size_t size);

/* Whether an input looks like text rather than bytes: no control byte but tab, CR and LF (bytes
 * past ASCII may be in comments), and its first token a mnemonic or a comment, or nothing but
 * blanks. */
int fuzz_looks_like_text(const uint8_t *data, size_t size);

#endif /* FUZZ_TEXT_H */
