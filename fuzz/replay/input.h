/* A replay input: the file's bytes, read as the text form or as raw bytes.
 *
 * Which one (replay --help states the same rule):
 *   - --text or --bytes, when given, decides.
 *   - A file whose name ends in ".txt" is text: a line that does not assemble is an error at its
 *     FILE:LINE:COL, never a reason to run the file as bytes instead.
 *   - Any other file (and "-", stdin) is text when fuzz_looks_like_text says so: no control byte
 *     but tab, CR and LF, and a first word that is an op's mnemonic, or a comment first, or
 *     nothing but blanks. Otherwise it is bytes; when it has no control byte (so it may be text
 *     whose first op is misspelled), replay says on stderr that it read it as bytes.
 */
#ifndef FUZZ_REPLAY_INPUT_H
#define FUZZ_REPLAY_INPUT_H

#include "fuzz/lang/ops.h"
#include "fuzz/lang/program.h"

typedef enum replay_format {
  REPLAY_DETECT = 0, /* the rule above */
  REPLAY_TEXT,       /* --text */
  REPLAY_BYTES,      /* --bytes */
} replay_format;

/* The program at `path` ("-": stdin) as the bytes the target whose op set is `set` runs, into
 * *bytes; *is_text says which form the file was in. Returns 0 on bad input, after saying why on
 * stderr (an unreadable file, text that does not assemble). */
int replay_load(const char *path, replay_format format, const fuzz_opset *set, fuzz_buf *bytes,
                int *is_text);

#endif /* FUZZ_REPLAY_INPUT_H */
