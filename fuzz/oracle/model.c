/* The backend-neutral model (model.h): objects, cells and the three reachable sets. */
#include "fuzz/oracle/model.h"

#include <stdlib.h>
#include <string.h>

struct oracle_model {
  oracle_object *objs;
  size_t count, cap;
  uint64_t *words; /* every object's fields or payload words, in allocation order */
  size_t nwords, words_cap;
  oracle_obj *cells;
  size_t ncells;
  oracle_obj range_objs[ORACLE_RANGE_WORDS]; /* what each range word keeps (set_range_word) */
  uintptr_t range_words[ORACLE_RANGE_WORDS]; /* the words themselves */
  /* ... as they were when the latest collection began: what its mark saw, whatever a finalizer
   * of it wrote into them since */
  uintptr_t range_words_at_collect[ORACLE_RANGE_WORDS];
  uint64_t collects;
  /* The first object made after the latest collection began (a finalizer body's, or any later
   * op's): that collection cannot have freed it, so it is kept whatever reaches it. */
  size_t born_after_collect;
  size_t pinned; /* objects pinned now: roots */
  /* Reachable sets: one byte a object, a bit per oracle_reach_kind; and the walk's stack. */
  uint8_t *reached;
  size_t reached_cap;
  oracle_obj *stack;
  size_t stack_cap;
  size_t kept_bytes;
};

static uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= UINT64_C(0xff51afd7ed558ccd);
  x ^= x >> 33;
  x *= UINT64_C(0xc4ceb9fe1a85ec53);
  return x ^ (x >> 33);
}

oracle_model *oracle_model_create(size_t cells) {
  oracle_model *m = calloc(1, sizeof *m);
  if (m == NULL) return NULL;
  m->cells = malloc((cells + 1) * sizeof *m->cells);
  if (m->cells == NULL) {
    free(m);
    return NULL;
  }
  m->ncells = cells + 1; /* and the finalizer's SELF cell */
  oracle_model_reset(m);
  return m;
}

void oracle_model_reset(oracle_model *m) {
  m->count = 0;
  m->nwords = 0;
  m->collects = 0;
  m->born_after_collect = 0;
  m->pinned = 0;
  for (size_t i = 0; i < ORACLE_RANGE_WORDS; i++) {
    m->range_objs[i] = ORACLE_NONE;
    m->range_words[i] = 0;
    m->range_words_at_collect[i] = 0;
  }
  m->kept_bytes = 0;
  for (size_t i = 0; i < m->ncells; i++) m->cells[i] = ORACLE_NONE;
}

void oracle_model_destroy(oracle_model *m) {
  if (m == NULL) return;
  free(m->objs);
  free(m->words);
  free(m->cells);
  free(m->reached);
  free(m->stack);
  free(m);
}

static int grow(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return 1;
  size_t n = *cap ? *cap : 64;
  while (n < need) n *= 2;
  void *q = realloc(*p, n * elem);
  if (q == NULL) return 0;
  *p = q;
  *cap = n;
  return 1;
}

oracle_obj oracle_model_new(oracle_model *m, fuzz_block_shape shape, oracle_role role,
                            size_t nfields) {
  if (m->count >= UINT32_MAX - 1 ||
      !grow((void **)&m->objs, &m->cap, m->count + 1, sizeof *m->objs) ||
      !grow((void **)&m->words, &m->words_cap, m->nwords + nfields, sizeof *m->words)) {
    return ORACLE_NONE;
  }
  oracle_obj o = (oracle_obj)m->count++;
  oracle_object *ob = &m->objs[o];
  memset(ob, 0, sizeof *ob);
  ob->id = ORACLE_ID_SALT << 32 | o;
  ob->check = mix(ob->id ^ (uint64_t)shape << 40 ^ (uint64_t)role << 44 ^ (uint64_t)nfields);
  ob->shape = (uint8_t)shape;
  ob->role = (uint8_t)role;
  ob->nfields = (uint32_t)nfields;
  ob->first = m->nwords;
  ob->a = ob->b = ORACLE_NONE;
  ob->fin_cell = SIZE_MAX;
  if (o < m->reached_cap) m->reached[o] = 0; /* in no set until one is computed again */
  memset(m->words + m->nwords, 0, nfields * sizeof *m->words);
  m->nwords += nfields;
  return o;
}

oracle_object *oracle_model_object(oracle_model *m, oracle_obj o) {
  return o < m->count ? &m->objs[o] : NULL;
}

size_t oracle_model_count(const oracle_model *m) { return m->count; }

oracle_obj oracle_model_by_id(const oracle_model *m, uint64_t id) {
  if (id >> 32 != ORACLE_ID_SALT) return ORACLE_NONE;
  uint64_t o = id & UINT32_MAX;
  return o < m->count ? (oracle_obj)o : ORACLE_NONE;
}

oracle_field oracle_model_field(const oracle_model *m, oracle_obj o, size_t f) {
  return m->words[m->objs[o].first + f];
}

void oracle_model_set_field(oracle_model *m, oracle_obj o, size_t f, oracle_field v) {
  m->words[m->objs[o].first + f] = v;
}

oracle_obj oracle_model_cell(const oracle_model *m, size_t cell) { return m->cells[cell]; }
void oracle_model_set_cell(oracle_model *m, size_t cell, oracle_obj o) { m->cells[cell] = o; }

uint64_t oracle_model_collects(const oracle_model *m) { return m->collects; }
void oracle_model_count_collect(oracle_model *m) { m->collects++; }

/* ---- Reachability -------------------------------------------------------------------------- */

static int mark(oracle_model *m, uint8_t bit, oracle_obj o, size_t *top) {
  if (o == ORACLE_NONE || (m->reached[o] & bit)) return 0;
  m->reached[o] |= bit;
  m->stack[(*top)++] = o;
  return 1;
}

/* The newest object whose block holds `w`: an older one there was freed before the newer one
 * was allocated at its address. */
static oracle_obj object_at(const oracle_model *m, uintptr_t w) {
  if (w == 0) return ORACLE_NONE;
  for (size_t k = m->count; k-- > 0;) {
    const oracle_object *ob = &m->objs[k];
    if (ob->bsize != 0 && w >= ob->addr && w - ob->addr < ob->bsize) return (oracle_obj)k;
  }
  return ORACLE_NONE;
}

/* Drain the stack: scanned fields, ephemeron data whose key is in the set. An ephemeron met
 * before its key is looked at again once the stack is empty (the fixpoint). */
static void propagate(oracle_model *m, uint8_t bit, size_t *top) {
  for (;;) {
    while (*top > 0) {
      oracle_obj o = m->stack[--*top];
      const oracle_object *ob = &m->objs[o];
      if (ob->role == ORACLE_PLAIN && ob->shape == FUZZ_SHAPE_SCAN) {
        for (size_t f = 0; f < ob->nfields; f++) {
          oracle_field v = m->words[ob->first + f];
          if (oracle_field_is_block(v)) mark(m, bit, oracle_field_block_of(v), top);
        }
      } else if (ob->role == ORACLE_EPHE && ob->a != ORACLE_NONE && (m->reached[ob->a] & bit)) {
        mark(m, bit, ob->b, top);
      }
    }
    int more = 0;
    for (size_t k = 0; k < m->count; k++) {
      const oracle_object *ob = &m->objs[k];
      if (ob->role == ORACLE_EPHE && (m->reached[k] & bit) && ob->a != ORACLE_NONE &&
          (m->reached[ob->a] & bit)) {
        more |= mark(m, bit, ob->b, top);
      }
    }
    if (!more) return;
  }
}

/* The stack and the set bits: room for every object. */
static void ensure_room(oracle_model *m) {
  if (!grow((void **)&m->reached, &m->reached_cap, m->count, 1) ||
      !grow((void **)&m->stack, &m->stack_cap, m->count, sizeof *m->stack)) {
    abort(); /* the model's memory is the harness's: no heap to report on without it */
  }
}

static void reach_from_roots(oracle_model *m, uint8_t bit, size_t skip) {
  ensure_room(m);
  for (size_t k = 0; k < m->count; k++) m->reached[k] &= (uint8_t)~bit;
  size_t top = 0;
  for (size_t c = 0; c < m->ncells; c++) {
    if (c != skip) mark(m, bit, m->cells[c], &top);
  }
  for (size_t i = 0; i < ORACLE_RANGE_WORDS; i++) mark(m, bit, m->range_objs[i], &top);
  for (size_t k = 0; m->pinned > 0 && k < m->count; k++) {
    if (m->objs[k].pinned) mark(m, bit, (oracle_obj)k, &top);
  }
  propagate(m, bit, &top);
}

void oracle_model_moved(oracle_model *m, oracle_obj o, uintptr_t start) {
  if (o == ORACLE_NONE) return;
  oracle_object *ob = &m->objs[o];
  if (ob->bsize == 0) return;
  ob->addr = start;
  for (size_t k = 0; k < m->count; k++) {
    oracle_object *other = &m->objs[k];
    if ((oracle_obj)k == o || other->bsize == 0) continue;
    if (other->addr < start + ob->bsize && start < other->addr + other->bsize) other->bsize = 0;
  }
}

void oracle_model_set_pinned(oracle_model *m, oracle_obj o, int pinned) {
  oracle_object *ob = &m->objs[o];
  if (ob->pinned == (pinned != 0)) return;
  ob->pinned = pinned != 0;
  if (pinned) {
    m->pinned++;
  } else {
    m->pinned--;
  }
}

/* Whatever block each non-zero range word points into, live or freed (the newest there), now
 * or when the latest collection began: what a collector may keep for a word, whether or not the
 * model counts on it. */
static void mark_range_targets(oracle_model *m, uint8_t bit, size_t *top) {
  for (size_t i = 0; i < ORACLE_RANGE_WORDS; i++) {
    if (m->range_words[i] != 0) mark(m, bit, object_at(m, m->range_words[i]), top);
    if (m->range_words_at_collect[i] != 0) {
      mark(m, bit, object_at(m, m->range_words_at_collect[i]), top);
    }
  }
}

void oracle_model_reach(oracle_model *m, oracle_reach_kind kind, size_t skip) {
  uint8_t bit = (uint8_t)(1u << kind);
  reach_from_roots(m, bit, skip);
  if (kind == ORACLE_REACH_AT_COLLECT) {
    m->born_after_collect = m->count;
    memcpy(m->range_words_at_collect, m->range_words, sizeof m->range_words);
    /* The fields as they are now, before any finalizer of this collection runs its body. */
    uint8_t fin_bit = (uint8_t)(1u << ORACLE_REACH_FIN_AT_COLLECT);
    size_t top = 0;
    for (size_t k = 0; k < m->count; k++) m->reached[k] &= (uint8_t)~fin_bit;
    for (size_t k = 0; k < m->count; k++) {
      if (m->objs[k].fin == ORACLE_FIN_SET) mark(m, fin_bit, (oracle_obj)k, &top);
    }
    propagate(m, fin_bit, &top);
  }
  if (kind != ORACLE_REACH_KEPT) return;
  /* Kept: what the latest collection began with, what the objects with a finalizer set reached
   * then, what a finalizer still to run may see, and what one that ran this collection left
   * (whatever its body set or cleared after). */
  size_t top = 0;
  uint8_t at_collect = (uint8_t)(1u << ORACLE_REACH_AT_COLLECT);
  uint8_t fin_at_collect = (uint8_t)(1u << ORACLE_REACH_FIN_AT_COLLECT);
  for (size_t k = 0; k < m->count; k++) {
    const oracle_object *ob = &m->objs[k];
    if (ob->fin == ORACLE_FIN_SET || (m->reached[k] & (at_collect | fin_at_collect)) ||
        k >= m->born_after_collect ||
        (ob->fin_ran_collect != 0 && ob->fin_ran_collect == m->collects)) {
      mark(m, bit, (oracle_obj)k, &top);
    }
  }
  mark_range_targets(m, bit, &top);
  propagate(m, bit, &top);
  m->kept_bytes = 0;
  for (size_t k = 0; k < m->count; k++) {
    if (m->reached[k] & bit) m->kept_bytes += ((size_t)m->objs[k].nfields + 2) * sizeof(uint64_t);
  }
}

void oracle_model_set_range_word(oracle_model *m, size_t index, uintptr_t w, size_t skip) {
  m->range_words[index] = w;
  m->range_objs[index] = ORACLE_NONE;
  oracle_obj o = object_at(m, w);
  if (o == ORACLE_NONE) return;
  reach_from_roots(m, (uint8_t)(1u << ORACLE_REACH_STRONG), skip);
  if (m->reached[o] & (1u << ORACLE_REACH_STRONG)) m->range_objs[index] = o;
}

/* Bit 7 of `reached` is the revival's scratch: strong before the resurrection. */
enum { BEFORE_BIT = 0x80 };

size_t oracle_model_revive(oracle_model *m, size_t cell, oracle_obj o, size_t skip) {
  reach_from_roots(m, BEFORE_BIT, skip);
  m->cells[cell] = o;
  uint8_t strong = (uint8_t)(1u << ORACLE_REACH_STRONG);
  reach_from_roots(m, strong, skip);
  size_t n = 0;
  for (size_t k = 0; k < m->count; k++) {
    if (!(m->reached[k] & strong) || (m->reached[k] & BEFORE_BIT)) continue;
    /* Excused at every revival, not only the first: a weak reference made since an earlier one
     * was not there to be excused then, and the collection this revival undoes may have
     * cleared it. */
    oracle_model_excuse_weak(m, (oracle_obj)k);
    if (!m->objs[k].revived) {
      m->objs[k].revived = 1;
      n++;
    }
  }
  return n;
}

void oracle_model_excuse_weak(oracle_model *m, oracle_obj o) {
  for (size_t k = 0; k < m->count; k++) {
    oracle_object *ob = &m->objs[k];
    if ((ob->role == ORACLE_WEAK || ob->role == ORACLE_EPHE) && ob->a == o) ob->may_be_empty = 1;
  }
}

/* Bit 6: what keeps a block with a finalizer from being due. */
enum { NOT_DUE_BIT = 0x40 };

oracle_obj oracle_model_fin_overdue(oracle_model *m, size_t skip, int ordered) {
  reach_from_roots(m, NOT_DUE_BIT, skip);
  size_t top = 0;
  uint8_t at_collect = (uint8_t)(1u << ORACLE_REACH_AT_COLLECT);
  for (size_t k = 0; k < m->count; k++) {
    const oracle_object *ob = &m->objs[k];
    /* Not due: what the collection began with a path to, what was born after it began, what
     * it finalized, and a finalizer set during it (by a finalizer's body: the collection had
     * decided by then). */
    if ((m->reached[k] & at_collect) || k >= m->born_after_collect ||
        (ob->fin_ran_collect != 0 && ob->fin_ran_collect == m->collects) ||
        (ob->fin == ORACLE_FIN_SET && ob->fin_set_collect >= m->collects)) {
      mark(m, NOT_DUE_BIT, (oracle_obj)k, &top);
    }
    /* Below another block with a finalizer: an ordering collector (bdwgc, gcfuzz) keeps it for
     * that finalizer and finalizes it in a later cycle. */
    if (ob->fin == ORACLE_FIN_SET && ob->role == ORACLE_PLAIN && ob->shape == FUZZ_SHAPE_SCAN) {
      for (size_t f = 0; f < ob->nfields; f++) {
        oracle_field v = m->words[ob->first + f];
        if (oracle_field_is_block(v) && (ordered || oracle_field_block_of(v) != (oracle_obj)k)) {
          mark(m, NOT_DUE_BIT, oracle_field_block_of(v), &top);
        }
      }
    }
  }
  mark_range_targets(m, NOT_DUE_BIT, &top);
  propagate(m, NOT_DUE_BIT, &top);
  for (size_t k = 0; k < m->count; k++) {
    if (m->objs[k].fin == ORACLE_FIN_SET && !(m->reached[k] & NOT_DUE_BIT)) return (oracle_obj)k;
  }
  return ORACLE_NONE;
}

/* Bit 5: below the fields of a block with a finalizer set. */
enum { BELOW_FIN_BIT = 0x20 };

int oracle_model_below_finalizers(oracle_model *m, oracle_obj o) {
  ensure_room(m);
  for (size_t k = 0; k < m->count; k++) m->reached[k] &= (uint8_t)~BELOW_FIN_BIT;
  size_t top = 0;
  for (size_t k = 0; k < m->count; k++) {
    const oracle_object *ob = &m->objs[k];
    if (ob->fin != ORACLE_FIN_SET || ob->fin_set_collect >= m->collects ||
        ob->role != ORACLE_PLAIN || ob->shape != FUZZ_SHAPE_SCAN)
      continue;
    for (size_t f = 0; f < ob->nfields; f++) {
      oracle_field v = m->words[ob->first + f];
      if (oracle_field_is_block(v)) mark(m, BELOW_FIN_BIT, oracle_field_block_of(v), &top);
    }
  }
  propagate(m, BELOW_FIN_BIT, &top);
  return (m->reached[o] & BELOW_FIN_BIT) != 0;
}

void oracle_model_forget_revivals(oracle_model *m) {
  for (size_t k = 0; k < m->count; k++) m->objs[k].revived = 0;
}

int oracle_model_reached(const oracle_model *m, oracle_reach_kind kind, oracle_obj o) {
  return o < m->count && o < m->reached_cap && (m->reached[o] >> kind & 1);
}

size_t oracle_model_kept_bytes(const oracle_model *m) { return m->kept_bytes; }
