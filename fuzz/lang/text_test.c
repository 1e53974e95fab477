/* The op language and its text form: every byte string decodes; printing then assembling gives
 * bytes that decode to the same ops (random inputs); each op's text is what the README shows;
 * malformed text is refused with the right line and column. */
#include <stdlib.h>
#include <string.h>

#include "fuzz/lang/program.h"
#include "fuzz/lang/text.h"
#include "gc/check.h"

static int ops_equal(const fuzz_op *x, const fuzz_op *y) {
  if (x->code != y->code || x->depth != y->depth || x->body != y->body) return 0;
  for (int i = 0; i < FUZZ_MAX_OPERANDS; i++) {
    if (x->args[i].a != y->args[i].a || x->args[i].b != y->args[i].b) return 0;
  }
  return 1;
}

/* Print random bytes as text, assemble the text: the ops must be the same, and the canonical
 * bytes must print to the very same text. */
/* Every byte string prints, assembles back to bytes that decode to the same ops, and prints the
 * same again: for each target's op set. */
static void random_bytes_round_trip_in(const fuzz_opset *set) {
  unsigned seed = 12345;
  for (int iter = 0; iter < 2000; iter++) {
    uint8_t in[300];
    size_t n = (size_t)(iter % 300);
    for (size_t i = 0; i < n; i++) {
      seed = seed * 1103515245u + 12345u;
      in[i] = (uint8_t)(seed >> 16);
    }
    char *text = NULL;
    size_t text_len = 0;
    FILE *f = open_memstream(&text, &text_len);
    size_t count = fuzz_print_program(f, set, in, n, iter % 2);
    fclose(f);
    fuzz_buf bytes = {0};
    fuzz_text_error err;
    CHECK(fuzz_assemble(set, text, text_len, &bytes, &err));
    if (err.line) fprintf(stderr, "%zu:%zu: %s\n%s", err.line, err.column, err.message, text);
    CHECK_EQ_U(fuzz_program_count(set, bytes.data, bytes.size), count);

    fuzz_decoder a, b;
    fuzz_op x, y;
    fuzz_decoder_init(&a, set, in, n);
    fuzz_decoder_init(&b, set, bytes.data, bytes.size);
    while (fuzz_program_next(&a, &x)) {
      CHECK(fuzz_program_next(&b, &y));
      CHECK(ops_equal(&x, &y));
    }
    CHECK(!fuzz_program_next(&b, &y));
    /* The count walks without decoding: as many ops as decoding finds, in random bytes too. */
    CHECK_EQ_U(fuzz_program_count(set, in, n), a.index);

    char *again = NULL;
    size_t again_len = 0;
    f = open_memstream(&again, &again_len);
    fuzz_print_program(f, set, bytes.data, bytes.size, iter % 2);
    fclose(f);
    CHECK(again_len == text_len && memcmp(again, text, text_len) == 0);
    free(again);
    free(text);
    fuzz_buf_free(&bytes);
  }
}

static void random_bytes_round_trip(void) {
  random_bytes_round_trip_in(&fuzz_opset_graph);
  random_bytes_round_trip_in(&fuzz_opset_roots);
  random_bytes_round_trip_in(&fuzz_opset_schedule);
}

/* The ops of `text` (graph), decoded into ops[] (at most max); returns how many. */
static size_t decode_text(const char *text, fuzz_buf *bytes, fuzz_op *ops, size_t max) {
  fuzz_text_error err;
  CHECK(fuzz_assemble(NULL, text, strlen(text), bytes, &err));
  fuzz_decoder dec;
  size_t n = 0;
  fuzz_decoder_init(&dec, NULL, bytes->data, bytes->size);
  while (n < max && fuzz_program_next(&dec, &ops[n])) n++;
  return n;
}

/* fin_do's body is the next K ops, however they are indented: each gets its depth, nested
 * bodies count in the one around them and are cut where it ends, a fin_do two deep opens
 * none, and the input may end inside a body. */
static void finalizer_bodies_decode(void) {
  const char *text =
      "fin_do s0 5\n"     /* 0: body 1..5 */
      "alloc s1 scan 1\n" /* 1 */
      "fin_do s1 8\n"     /* 2: cut to 3 (the rest of s0's body) */
      "self s2\n"         /* 3: depth 2 */
      "fin_do s2 4\n"     /* 4: depth 2, no body of its own */
      "collect full\n"    /* 5: depth 2, s0's last */
      "drop s1\n"         /* 6: depth 0 */
      "fin_do s4 3\n"     /* 7: the input ends after one of its 3 */
      "self s5\n";
  fuzz_buf bytes = {0};
  fuzz_op ops[16];
  size_t n = decode_text(text, &bytes, ops, 16);
  CHECK_EQ_U(n, 9);
  static const int depth[] = {0, 1, 1, 2, 2, 2, 0, 0, 1};
  static const int body[] = {5, 0, 3, 0, 0, 0, 0, 3, 0};
  for (size_t i = 0; i < n; i++) {
    CHECK_EQ_U(ops[i].depth, depth[i]);
    CHECK_EQ_U(ops[i].body, body[i]);
  }
  CHECK_EQ_U(ops[2].args[1].a, 8); /* the operand stays as written */
  /* A body's cursor gives exactly its ops, nested ones with their depth, then stops. */
  fuzz_decoder dec;
  fuzz_op op;
  fuzz_decoder_init_body(&dec, NULL, bytes.data, bytes.size, ops[1].offset, 1, 1, ops[0].body);
  size_t k = 1;
  while (fuzz_program_next(&dec, &op)) {
    CHECK(k <= 5 && op.code == ops[k].code && op.depth == ops[k].depth && op.index == k);
    k++;
  }
  CHECK_EQ_U(k, 6);
  fuzz_decoder_init_body(&dec, NULL, bytes.data, bytes.size, ops[3].offset, 3, 2, ops[2].body);
  for (k = 3; fuzz_program_next(&dec, &op); k++) CHECK(op.code == ops[k].code && op.depth == 2);
  CHECK_EQ_U(k, 6);
  fuzz_decoder_init_body(&dec, NULL, bytes.data, bytes.size, ops[1].offset, 1, 1, 0);
  CHECK(!fuzz_program_next(&dec, &op)); /* an empty body */
  fuzz_decoder_init_body(&dec, NULL, bytes.data, bytes.size, ops[5].offset, 5, 3, 4);
  CHECK(!fuzz_program_next(&dec, &op)); /* the body of the fin_do two deep: none */
  /* Printed indented two blanks a level; the text assembles to the same bytes. */
  char *out = NULL;
  size_t out_len = 0;
  FILE *f = open_memstream(&out, &out_len);
  fuzz_print_program(f, NULL, bytes.data, bytes.size, 0);
  fclose(f);
  CHECK(strstr(out, "fin_do s0 5\n  alloc s1 scan 1\n  fin_do s1 8\n    self s2\n") == out);
  CHECK(strstr(out, "    collect full\ndrop s1\nfin_do s4 3\n  self s5\n") != NULL);
  fuzz_buf again = {0};
  fuzz_text_error err;
  CHECK(fuzz_assemble(NULL, out, out_len, &again, &err));
  CHECK(again.size == bytes.size && memcmp(again.data, bytes.data, bytes.size) == 0);
  free(out);
  fuzz_buf_free(&again);
  fuzz_buf_free(&bytes);
}

/* The roots target names its ops with its own bytes; its text is the graph target's. */
static void op_sets(void) {
  CHECK(fuzz_opset_find("graph") == &fuzz_opset_graph);
  CHECK(fuzz_opset_find("roots") == &fuzz_opset_roots);
  CHECK(fuzz_opset_find("bogus") == NULL);
  const char *text = "alloc s1 scan 3\nrange_pool r0.1 s1 2\ncollect full\n";
  fuzz_buf g = {0}, r = {0};
  fuzz_text_error err;
  CHECK(fuzz_assemble(&fuzz_opset_graph, text, strlen(text), &g, &err));
  CHECK(fuzz_assemble(&fuzz_opset_roots, text, strlen(text), &r, &err));
  CHECK_EQ_U(g.size, r.size);
  CHECK(g.size > 0 && r.size > 0 && r.data[0] == g.data[0]); /* alloc is first in both */
  CHECK(memcmp(g.data, r.data, g.size) != 0);                /* range_pool's byte differs */
  CHECK_EQ_U(fuzz_program_count(&fuzz_opset_roots, r.data, r.size), 3);
  fuzz_buf_free(&g);
  fuzz_buf_free(&r);
  fuzz_buf b = {0};
  CHECK(!fuzz_assemble(&fuzz_opset_roots, "spawn d1", 8, &b, &err));
  CHECK(strstr(err.message, "not one of the roots target's ops") != NULL);
  CHECK_EQ_U(err.column, 1);
  fuzz_buf_free(&b);
  /* corrupt breaks the heap for a moment: the graph target only, never with other threads. */
  const char *corrupt = "corrupt reach.zero-header s0 0";
  CHECK(fuzz_opset_byte(&fuzz_opset_graph, FUZZ_OP_CORRUPT) == FUZZ_OP_PCT);
  CHECK(!fuzz_assemble(&fuzz_opset_schedule, corrupt, strlen(corrupt), &b, &err));
  CHECK(strstr(err.message, "not one of the schedule target's ops") != NULL);
  CHECK(!fuzz_assemble(&fuzz_opset_roots, corrupt, strlen(corrupt), &b, &err));
  fuzz_buf_free(&b);
}

static void assemble_one(const char *text, const char *want) {
  fuzz_buf bytes = {0};
  fuzz_text_error err;
  int ok = fuzz_assemble(NULL, text, strlen(text), &bytes, &err);
  CHECK(ok);
  if (!ok) {
    fprintf(stderr, "  '%s': %zu:%zu: %s\n", text, err.line, err.column, err.message);
    return;
  }
  fuzz_decoder dec;
  fuzz_op op;
  fuzz_decoder_init(&dec, NULL, bytes.data, bytes.size);
  CHECK(fuzz_program_next(&dec, &op));
  char line[FUZZ_OP_TEXT_MAX];
  fuzz_op_format(&op, line, sizeof line);
  if (strcmp(line, want) != 0) fprintf(stderr, "  '%s' printed as '%s'\n", want, line);
  CHECK(strcmp(line, want) == 0);
  fuzz_buf_free(&bytes);
}

static void every_op_has_its_text(void) {
  assemble_one("alloc s3 scan 4", "alloc s3 scan 4");
  assemble_one("  alloc   s15 custom 127   # a comment", "alloc s15 custom 127");
  assemble_one("alloc_large s0 raw 1151", "alloc_large s0 raw 1151");
  assemble_one("store s3.1 s5", "store s3.1 s5");
  assemble_one("store_imm s3.63 255", "store_imm s3.63 255");
  assemble_one("load s2 s3.0", "load s2 s3.0");
  assemble_one("drop s1", "drop s1");
  assemble_one("copy s1 s2", "copy s1 s2");
  assemble_one("push", "push");
  assemble_one("pop", "pop");
  assemble_one("root g7 s2", "root g7 s2");
  assemble_one("unroot g0", "unroot g0");
  assemble_one("collect slice", "collect slice");
  assemble_one("collect major", "collect major");
  assemble_one("collect full", "collect full");
  assemble_one("param percent off", "param percent off");
  assemble_one("param marking incremental", "param marking incremental");
  assemble_one("param marking stw", "param marking stw");
  assemble_one("param markslice 256", "param markslice 256");
  assemble_one("collect start", "collect start");
  assemble_one("mark_slice 16", "mark_slice 16");
  assemble_one("param markstack 4", "param markstack 4");
  assemble_one("param sweep 1", "param sweep 1");
  assemble_one("param mintrigger 0", "param mintrigger 0");
  assemble_one("fail 3", "fail 3");
  assemble_one("fail off", "fail off");
  assemble_one("limit 64k", "limit 64k");
  assemble_one("limit 1m", "limit 1m");
  assemble_one("limit off", "limit off");
  assemble_one("pin s4", "pin s4");
  assemble_one("unpin s4", "unpin s4");
  assemble_one("misuse alloc0", "misuse alloc0");
  assemble_one("misuse unknown-param", "misuse unknown-param");
  assemble_one("param batch 16", "param batch 16");
  assemble_one("param keep 0", "param keep 0");
  assemble_one("spawn d3", "spawn d3");
  assemble_one("terminate d0", "terminate d0");
  assemble_one("on d1", "on d1");
  assemble_one("block", "block");
  assemble_one("unblock", "unblock");
  assemble_one("fin s2 s9", "fin s2 s9");
  assemble_one("fin s2 -", "fin s2 -");
  assemble_one("unfin s15", "unfin s15");
  assemble_one("fin_do s3 8", "fin_do s3 8");
  assemble_one("fin_do s3 0", "fin_do s3 0");
  assemble_one("self s12", "self s12");
  assemble_one("range r3.7 s1 +191", "range r3.7 s1 +191");
  assemble_one("range r0.0 s1 -8", "range r0.0 s1 -8");
  assemble_one("range r0.0 s1 +0", "range r0.0 s1 +0");
  assemble_one("range r1.2 s1 end", "range r1.2 s1 end");
  assemble_one("range r1.2 s1 end-28", "range r1.2 s1 end-28");
  assemble_one("range r1.2 s1 end+27", "range r1.2 s1 end+27");
  assemble_one("range_int r2.5 0", "range_int r2.5 0");
  assemble_one("range_word r1.1 0x0", "range_word r1.1 0x0");
  assemble_one("range_word r1.1 0xffffffffffffffff", "range_word r1.1 0xffffffffffffffff");
  assemble_one("range_word r1.1 0x7f00deadbeef", "range_word r1.1 0x7f00deadbeef");
  assemble_one("range_pool r3.0 s2 255", "range_pool r3.0 s2 255");
  assemble_one("corrupt reach.zero-header s3 2", "corrupt reach.zero-header s3 2");
  assemble_one("corrupt  model.finalizer-count/unknown-block  s15 255 # longest",
               "corrupt model.finalizer-count/unknown-block s15 255");
  /* Every corruption's name, and the bytes of each: its index. */
  for (int c = 0; c < FUZZ_CORRUPTION_COUNT; c++) {
    char line[FUZZ_OP_TEXT_MAX];
    snprintf(line, sizeof line, "corrupt %s s1 7", fuzz_corruption_names[c]);
    assemble_one(line, line);
    fuzz_buf bytes = {0};
    fuzz_text_error err;
    CHECK(fuzz_assemble(NULL, line, strlen(line), &bytes, &err));
    CHECK(bytes.size == 4 && bytes.data[1] == c);
    fuzz_buf_free(&bytes);
  }
}

static void refused(const char *text, size_t line, size_t column, const char *needle) {
  fuzz_buf bytes = {0};
  fuzz_text_error err;
  CHECK(!fuzz_assemble(NULL, text, strlen(text), &bytes, &err));
  CHECK_EQ_U(err.line, line);
  CHECK_EQ_U(err.column, column);
  if (strstr(err.message, needle) == NULL || err.line != line || err.column != column) {
    fprintf(stderr, "  for %s: got %zu:%zu: %s (wanted %zu:%zu ... %s)\n", text, err.line,
            err.column, err.message, line, column, needle);
  }
  CHECK(strstr(err.message, needle) != NULL);
  fuzz_buf_free(&bytes);
}

static void malformed_text_is_refused_with_line_and_column(void) {
  refused("alloc s3 scan 4\nbogus s1\n", 2, 1, "unknown op 'bogus'");
  refused("fin_do s1 9", 1, 11, "fin_do: '9' is not a body length 0..8");
  refused("fin_do s1", 1, 10, "fin_do: missing operand: a body length");
  refused("alloc s16 scan 4", 1, 7, "alloc: 's16' is not a slot");
  refused("alloc s3 scan 0", 1, 15, "small size");
  refused("alloc s3 scan 128", 1, 15, "small size");
  refused("alloc s3 scan 04", 1, 15, "small size"); /* not canonical */
  refused("alloc_large s3 raw 99", 1, 20, "large size");
  refused("alloc s3 blue 4", 1, 10, "block kind");
  refused("\n\n  store s3 s5", 3, 9, "store: 's3' is not a field");
  refused("store s3.64 s5", 1, 7, "store: 's3.64' is not a field");
  refused("collect", 1, 8, "missing operand");
  refused("collect minor", 1, 9, "slice, major, full or start");
  refused("param markstack 3", 1, 17, "one of: 4, 5, 8");
  refused("param percent", 1, 14, "missing the value");
  refused("param marking 1", 1, 15, "marking cannot be '1' (one of: stw, incremental)");
  refused("param gogc 100", 1, 7, "unknown parameter");
  refused("param batch 3", 1, 13, "one of: 1, 2, 4, 16");
  refused("misuse everything", 1, 8, "a misuse");
  refused("pin", 1, 4, "missing operand");
  refused("fail 0", 1, 6, "off");
  refused("limit 33k", 1, 7, "heap limit");
  refused("drop s1 s2", 1, 9, "unexpected 's2'");
  refused("pop\n\tpush x # y", 2, 7, "unexpected 'x'");
  refused("drop s1\xff", 1, 8, "unexpected byte 0xff");
  refused("spawn d4", 1, 7, "a domain d0..d3");
  refused("on s1", 1, 4, "a domain");
  refused("fin s1", 1, 7, "missing operand: a slot s0..s15, or -");
  refused("fin s1 none", 1, 8, "or - for none");
  refused("range r4.0 s1 +0", 1, 7, "conservative range word");
  refused("range r0.8 s1 +0", 1, 7, "conservative range word");
  refused("range r0.0 s1 +192", 1, 15, "byte offset");
  refused("range r0.0 s1 -9", 1, 15, "byte offset");
  refused("range r0.0 s1 -0", 1, 15, "byte offset");    /* not canonical: +0 */
  refused("range r0.0 s1 8", 1, 15, "byte offset");     /* the sign is required */
  refused("range r0.0 s1 end+0", 1, 15, "byte offset"); /* not canonical: end */
  refused("range r0.0 s1 end-29", 1, 15, "byte offset");
  refused("range r0.0 s1 end+28", 1, 15, "byte offset");
  refused("range_int r0.0 256", 1, 16, "an integer");
  refused("range_word r0.0 0x00", 1, 17, "64-bit word");  /* leading zero */
  refused("range_word r0.0 0xABC", 1, 17, "64-bit word"); /* lower case */
  refused("range_word r0.0 0x10000000000000000", 1, 17, "64-bit word");
  refused("range_word r0.0 255", 1, 17, "64-bit word");
  refused("corrupt reach.zero s1 0", 1, 9,
          "'reach.zero' is not a corruption: the verification kind");
  refused("corrupt reach.zero-header", 1, 26, "missing operand: a slot");
  refused("corrupt reach.zero-header s1 256", 1, 30, "an integer");
  refused("corrupt s1 reach.zero-header 0", 1, 9, "corrupt: 's1' is not a corruption");
}

/* A comment is prose: any byte but a control character, so an arrow or an accent (UTF-8) in
 * one assembles. Outside comments, text is ASCII. */
static void comments_may_hold_any_printable_byte(void) {
  assemble_one("store s0.0 s1  # s0 \xe2\x86\x92 s1", "store s0.0 s1");
  assemble_one("# caf\xc3\xa9, na\xc3\xafve\ncollect full", "collect full");
  assemble_one("collect full #\xff\x80 not even UTF-8", "collect full");
  refused("collect full\xe2\x86\x92", 1, 13, "unexpected byte 0xe2");
  refused("collect full # bell \a", 1, 21, "unexpected byte 0x07");
  refused("collect full # del \x7f", 1, 20, "unexpected byte 0x7f");
}

/* Every message quotes the token it refuses, in full, however long the operand's description:
 * the token comes first, the description after. */
static void messages_quote_the_whole_token(void) {
  refused("misuse frob", 1, 8, "misuse: 'frob' is not a misuse: alloc0, too-large");
  refused("range r0.0 s1 frob", 1, 15, "range: 'frob' is not a byte offset");
  char line[400], want[300];
  char token[201];
  memset(token, 'x', 200);
  token[200] = '\0';
  snprintf(line, sizeof line, "corrupt %s s1 0", token);
  snprintf(want, sizeof want, "corrupt: '%s' is not a corruption", token);
  refused(line, 1, 9, want);
  snprintf(line, sizeof line, "%s s1", token);
  snprintf(want, sizeof want, "unknown op '%s'", token);
  refused(line, 1, 1, want);
  /* Past FUZZ_TEXT_TOKEN_MAX characters, the quote stops there and gives the length. */
  size_t huge_len = FUZZ_TEXT_TOKEN_MAX + 100;
  char *huge = malloc(huge_len + 1);
  memset(huge, 'y', huge_len);
  huge[huge_len] = '\0';
  refused(huge, 1, 1, "...' (a 612-character token)");
  free(huge);
}

static void short_inputs_decode(void) {
  /* An op cut short reads its missing operand bytes as 0. */
  uint8_t in[] = {FUZZ_OP_ALLOC, 3};
  fuzz_decoder dec;
  fuzz_op op;
  fuzz_decoder_init(&dec, NULL, in, sizeof in);
  CHECK(fuzz_program_next(&dec, &op));
  CHECK(op.code == FUZZ_OP_ALLOC && op.args[0].a == 3 && op.args[1].a == 0 && op.args[2].a == 1);
  CHECK(!fuzz_program_next(&dec, &op));
  CHECK_EQ_U(fuzz_program_count(NULL, NULL, 0), 0);
}

static void text_detection(void) {
  const char *t = "# hello\nalloc s1 scan 2\n";
  CHECK(fuzz_looks_like_text((const uint8_t *)t, strlen(t)));
  t = "collect full";
  CHECK(fuzz_looks_like_text((const uint8_t *)t, strlen(t)));
  uint8_t b[] = {0, 1, 2, 3};
  CHECK(!fuzz_looks_like_text(b, sizeof b));
  t = "hello world";
  CHECK(!fuzz_looks_like_text((const uint8_t *)t, strlen(t)));
  t = "# s0 \xe2\x86\x92 s1\nalloc s1 scan 2\n"; /* UTF-8 in a comment */
  CHECK(fuzz_looks_like_text((const uint8_t *)t, strlen(t)));
  CHECK(!fuzz_text_has_control_byte((const uint8_t *)t, strlen(t)));
  t = "alloc s1 scan 2\x7f";
  CHECK(fuzz_text_has_control_byte((const uint8_t *)t, strlen(t)));
}

/* A field past the end of the block its slot is known to hold is an error at its line and
 * column, unless written sN.F!; what is not known (a load, a pop, another domain's bank, a
 * finalizer body, a blocking section) is not checked. */
static int assembles(const fuzz_opset *set, const char *text, fuzz_text_error *err) {
  fuzz_buf bytes = {0};
  int ok = fuzz_assemble(set, text, strlen(text), &bytes, err);
  fuzz_buf_free(&bytes);
  return ok;
}

static void fields_past_the_end(void) {
  fuzz_text_error err;
  CHECK(!assembles(NULL, "alloc s0 scan 2\n# a comment\nstore s0.2 s0\n", &err));
  CHECK_EQ_U(err.line, 3);
  CHECK_EQ_U(err.column, 7);
  CHECK(strstr(err.message, "field 2 of s0 is past the end of its block") != NULL);
  CHECK(strstr(err.message, "made at line 1 (fields 0..1)") != NULL);
  CHECK(strstr(err.message, "s0.2!") != NULL);
  CHECK(!assembles(NULL, "alloc s0 custom 2\ncopy s1 s0\nload s2 s1.3\n", &err));
  CHECK_EQ_U(err.line, 3);
  CHECK_EQ_U(err.column, 9);
  CHECK(!assembles(NULL,
                   "alloc_large s0 raw 200\nstore_imm s0.63 1\nalloc s0 raw 1\n"
                   "store_imm s0.1 1\n",
                   &err));
  CHECK_EQ_U(err.line, 4);
  /* Meant, or not known: accepted. */
  const char *fine[] = {
      "alloc s0 scan 2\nstore s0.2! s0\nload s1 s0.5!\n",
      "alloc s0 custom 2\nstore_imm s0.2 7\n",             /* n + 1 fields */
      "alloc s0 scan 2\nload s0 s0.0\nstore s0.9 s0\n",    /* a load: unknown */
      "alloc s0 scan 2\npush\npop\nstore s0.9 s0\n",       /* a pop: unknown */
      "alloc s0 scan 2\ndrop s0\nstore s0.9 s0\n",         /* empty: a no-op of its own */
      "alloc s0 scan 2\nfin_do s1 1\nstore s0.9 s0\n",     /* a body: other slots, later */
      "alloc s0 scan 2\nblock\nstore s0.9 s0\nunblock\n",  /* skipped while blocked */
      "alloc s0 scan 2\nspawn d1\non d1\nstore s0.9 s0\n", /* d1's own bank */
  };
  for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++) {
    int ok = assembles(i == 7 ? &fuzz_opset_schedule : NULL, fine[i], &err);
    if (!ok) fprintf(stderr, "%zu: %zu:%zu: %s\n", i, err.line, err.column, err.message);
    CHECK(ok);
  }
  CHECK(!assembles(&fuzz_opset_schedule, "alloc s0 scan 2\nspawn d1\non d1\non d0\nstore s0.9 s0\n",
                   &err));
  CHECK_EQ_U(err.line, 5);
  /* Bytes keep such ops; printed, they carry the mark and assemble back to the same bytes. */
  fuzz_buf bytes = {0};
  CHECK(fuzz_assemble(NULL, fine[0], strlen(fine[0]), &bytes, &err));
  char *text = NULL;
  size_t text_len = 0;
  FILE *f = open_memstream(&text, &text_len);
  fuzz_print_program(f, &fuzz_opset_graph, bytes.data, bytes.size, 0);
  fclose(f);
  CHECK(strcmp(text, fine[0]) == 0);
  free(text);
  fuzz_buf_free(&bytes);
}

int main(void) {
  RUN(random_bytes_round_trip);
  RUN(fields_past_the_end);
  RUN(op_sets);
  RUN(every_op_has_its_text);
  RUN(finalizer_bodies_decode);
  RUN(malformed_text_is_refused_with_line_and_column);
  RUN(comments_may_hold_any_printable_byte);
  RUN(messages_quote_the_whole_token);
  RUN(short_inputs_decode);
  RUN(text_detection);
  CHECK_MAIN_END();
}
