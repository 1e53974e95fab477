/* Random programs against a small model of the Lua backend's heap, the deep check after every
 * op: loads read back what the model says, the walk lists every reachable block after each
 * collection (and nothing else after a full one), finalizers run only for armed blocks, weak
 * references and ephemerons clear only once their target was unreachable. Prints "N passed, M
 * failed". */
#include "fuzz/backend/lua/lua_test_kit.h"

enum { MODEL_OBJS = 2048, MODEL_FIELDS = 6, RCELLS = 12 };
enum { M_SCAN, M_RAW, M_WEAK, M_EPHE };

typedef struct mobj {
  int kind;
  size_t n;
  int field[MODEL_FIELDS]; /* -1 empty, -2 an integer (ival), else an object */
  int64_t ival[MODEL_FIELDS];
  uint64_t word[MODEL_FIELDS];
  int a, b;         /* weak: target; ephemeron: key, datum (-1: none) */
  int fin;          /* 0 none, 1 armed, 2 ran */
  int at_risk;      /* its target or key was unreachable once: a get may answer empty */
  int seen_cleared; /* a get answered empty: it must stay so */
  int keep_now;     /* its finalizer ran, or a finalizer's copy dropped it from a cell, during
                      * the current op: the collection may keep it until its next cycle */
} mobj;

typedef struct model {
  fuzz_bheap *h;
  mobj obj[MODEL_OBJS];
  int nobj;
  int cell[RCELLS + 1];
  uint64_t rng;
  int bad;
} model;

static uint64_t next_rand(model *m) {
  m->rng ^= m->rng << 13;
  m->rng ^= m->rng >> 7;
  m->rng ^= m->rng << 17;
  return m->rng;
}

static unsigned pick(model *m, unsigned n) { return (unsigned)(next_rand(m) % n); }

static uint64_t mid(int k) { return UINT64_C(0x6766757a00000000) | (uint64_t)k; }

static void fail(model *m, const char *what, int k) {
  if (!m->bad && k >= 0 && k < m->nobj)
    fprintf(stderr, "  random program: %s (object %d: kind %d, finalizer %d, a %d, b %d)\n", what,
            k, m->obj[k].kind, m->obj[k].fin, m->obj[k].a, m->obj[k].b);
  else if (!m->bad)
    fprintf(stderr, "  random program: %s\n", what);
  m->bad = 1;
}

/* Strong reachability from the cells (and from armed objects when `armed`): scanned fields and
 * ephemeron data whose key is reached, to a fixed point. */
static void reach(const model *m, char *mark, int armed) {
  memset(mark, 0, (size_t)m->nobj);
  int stack[MODEL_OBJS * 2], sp = 0;
  for (int c = 0; c <= RCELLS; c++)
    if (m->cell[c] >= 0) stack[sp++] = m->cell[c];
  for (int k = 0; armed && k < m->nobj; k++)
    if (m->obj[k].fin == 1 || m->obj[k].keep_now) stack[sp++] = k;
  for (int changed = 1; changed;) {
    while (sp > 0) {
      int k = stack[--sp];
      if (mark[k]) continue;
      mark[k] = 1;
      const mobj *o = &m->obj[k];
      if (o->kind == M_SCAN)
        for (size_t f = 0; f < o->n; f++)
          if (o->field[f] >= 0 && !mark[o->field[f]]) stack[sp++] = o->field[f];
    }
    changed = 0;
    for (int k = 0; k < m->nobj; k++) {
      const mobj *o = &m->obj[k];
      if (mark[k] && o->kind == M_EPHE && o->a >= 0 && mark[o->a] && o->b >= 0 && !mark[o->b]) {
        stack[sp++] = o->b;
        changed = 1;
      }
    }
  }
}

static void mark_risks(model *m, const char *mark) {
  for (int k = 0; k < m->nobj; k++) {
    mobj *o = &m->obj[k];
    if ((o->kind == M_WEAK || o->kind == M_EPHE) && o->a >= 0 && !mark[o->a]) o->at_risk = 1;
  }
}

static void model_finalize(void *user, uint64_t token) {
  model *m = user;
  int k = (int)token;
  uint64_t id, check;
  if (k < 0 || k >= m->nobj || m->obj[k].fin != 1) fail(m, "a finalizer not armed ran", k);
  if (!B->get_ident(m->h, RCELLS, &id, &check) || id != mid(k)) fail(m, "finalizer block", k);
  m->obj[k].fin = 2;
  m->obj[k].keep_now = 1;
  /* Weak references into what the finalizer resurrects were cleared: at risk. */
  char mark[MODEL_OBJS];
  int saved[RCELLS + 1];
  memcpy(saved, m->cell, sizeof saved);
  for (int c = 0; c <= RCELLS; c++) m->cell[c] = -1;
  m->cell[0] = k;
  reach(m, mark, 0);
  memcpy(m->cell, saved, sizeof saved);
  for (int j = 0; j < m->nobj; j++) {
    mobj *o = &m->obj[j];
    if ((o->kind == M_WEAK || o->kind == M_EPHE) && o->a >= 0 && mark[o->a]) o->at_risk = 1;
  }
  if (pick(m, 3) == 0) {
    int c = (int)pick(m, RCELLS);
    B->copy(m->h, (size_t)c, RCELLS);
    if (m->cell[c] >= 0) m->obj[m->cell[c]].keep_now = 1; /* dropped after it was marked */
    m->cell[c] = k;
  }
}

static int new_obj(model *m, int kind, size_t n) {
  int k = m->nobj++;
  mobj *o = &m->obj[k];
  memset(o, 0, sizeof *o);
  o->kind = kind;
  o->n = n;
  o->a = o->b = -1;
  for (size_t f = 0; f < MODEL_FIELDS; f++) o->field[f] = -1;
  return k;
}

static void verify_cells(model *m) {
  for (int c = 0; c < RCELLS; c++) {
    uint64_t id = 0, check = 0;
    int full = B->get_ident(m->h, (size_t)c, &id, &check);
    if (full != (m->cell[c] >= 0) || (full && (id != mid(m->cell[c]) || check != ~id)))
      fail(m, "a cell's identity", m->cell[c]);
  }
}

/* After any collection every strongly reachable block is there; after a full one, nothing else
 * but what finalizers keep. */
static void verify_walk(model *m, int full) {
  char strong[MODEL_OBJS], kept[MODEL_OBJS];
  reach(m, strong, 0);
  reach(m, kept, 1);
  id_set s;
  if (walk(m->h, &s) != 0) fail(m, "walk met unreadable blocks", -1);
  char seen[MODEL_OBJS] = {0};
  for (size_t i = 0; i < s.n && i < 4096; i++) {
    int k = (int)(s.ids[i] & 0xffffffff);
    if ((s.ids[i] >> 32) != 0x6766757a || k >= m->nobj) {
      fail(m, "walk met an identity no object has", k);
      continue;
    }
    seen[k] = 1;
    if (full && !kept[k]) fail(m, "a full collection left an unreachable block", k);
  }
  for (int k = 0; k < m->nobj; k++)
    if (strong[k] && !seen[k]) fail(m, "a reachable block is gone", k);
}

static void random_op(model *m, fuzz_finding *out) {
  fuzz_bheap *h = m->h;
  int c = (int)pick(m, RCELLS), d = (int)pick(m, RCELLS), e = (int)pick(m, RCELLS);
  int k = m->cell[c];
  int64_t v;
  int kind = -1; /* the collection this op made, if it is a collect */
  unsigned op = pick(m, 100);
  for (int j = 0; j < m->nobj; j++) m->obj[j].keep_now = 0;
  if (pick(m, 16) == 0) { /* a domain op besides: they change no reachability */
    unsigned dom = pick(m, 4), which = pick(m, 4);
    if (which == 0)
      B->domain_spawn(h, dom);
    else if (which == 3)
      B->domain_end(h, dom);
    else
      B->domain_on(h, dom);
  }
  if (op < 22) { /* alloc */
    if (m->nobj >= MODEL_OBJS - 4) return;
    int raw = pick(m, 3) == 0;
    size_t n = 1 + pick(m, MODEL_FIELDS);
    if (pick(m, 12) == 0) B->fail_after(h, 1 + pick(m, 4));
    m->cell[d] = -1;
    if (B->alloc(h, (size_t)d, raw ? FUZZ_SHAPE_RAW : FUZZ_SHAPE_SCAN, n)) {
      int j = new_obj(m, raw ? M_RAW : M_SCAN, n);
      B->set_ident(h, (size_t)d, mid(j), ~mid(j));
      m->cell[d] = j;
    }
  } else if (op < 36) { /* store */
    if (k < 0 || m->obj[k].kind != M_SCAN) return;
    size_t f = pick(m, (unsigned)m->obj[k].n);
    B->store(h, (size_t)c, f, (size_t)d);
    m->obj[k].field[f] = m->cell[d];
  } else if (op < 42) { /* store_int */
    if (k < 0 || m->obj[k].kind != M_SCAN) return;
    size_t f = pick(m, (unsigned)m->obj[k].n);
    int64_t x = (int64_t)pick(m, 256);
    B->store_int(h, (size_t)c, f, x);
    m->obj[k].field[f] = -2;
    m->obj[k].ival[f] = x;
  } else if (op < 54) { /* load */
    if (k < 0 || m->obj[k].kind != M_SCAN) return;
    size_t f = pick(m, (unsigned)m->obj[k].n);
    int want = m->obj[k].field[f];
    fuzz_field_kind got = B->load(h, (size_t)d, (size_t)c, f, &v);
    if (want == -1 && got != FUZZ_FIELD_EMPTY) fail(m, "load of an empty field", k);
    if (want == -2 && (got != FUZZ_FIELD_INT || v != m->obj[k].ival[f]))
      fail(m, "load of an integer", k);
    if (want >= 0 && got != FUZZ_FIELD_BLOCK) fail(m, "load of a block", want);
    m->cell[d] = want >= 0 ? want : -1;
  } else if (op < 60) {
    B->copy(h, (size_t)d, (size_t)c);
    m->cell[d] = k;
  } else if (op < 66) {
    B->clear(h, (size_t)c);
    m->cell[c] = -1;
  } else if (op < 74) {
    kind = (int)pick(m, 4);
    B->collect(h, (fuzz_collect_kind)kind, pick(m, 4) == 0 ? pick(m, 256) : pick(m, 3));
  } else if (op < 77) {
    B->tune(h, pick(m, (unsigned)B->tunable_count), pick(m, 256));
  } else if (op < 80) { /* raw words */
    if (k < 0 || m->obj[k].kind != M_RAW) return;
    size_t w = pick(m, (unsigned)m->obj[k].n);
    if (B->raw_read(h, (size_t)c, w) != m->obj[k].word[w]) fail(m, "a raw word", k);
    m->obj[k].word[w] = next_rand(m);
    B->raw_write(h, (size_t)c, w, m->obj[k].word[w]);
  } else if (op < 84) {
    if (k < 0) return;
    if (B->fin_set(h, (size_t)c, (uint64_t)k) != 1) fail(m, "fin_set", k);
    m->obj[k].fin = 1;
  } else if (op < 86) {
    if (k < 0) return;
    if (B->fin_clear(h, (size_t)c) != (m->obj[k].fin == 1)) fail(m, "fin_clear's answer", k);
    m->obj[k].fin = 0;
  } else if (op < 90) { /* weak_new */
    if (m->nobj >= MODEL_OBJS - 4) return;
    int target = m->cell[c];
    m->cell[d] = -1;
    if (B->weak_new(h, (size_t)d, (size_t)c)) {
      int j = new_obj(m, M_WEAK, 0);
      m->obj[j].a = target;
      B->set_ident(h, (size_t)d, mid(j), ~mid(j));
      m->cell[d] = j;
    }
  } else if (op < 93) { /* weak_get */
    if (k < 0 || m->obj[k].kind != M_WEAK) return;
    mobj *w = &m->obj[k];
    int got = B->weak_get(h, (size_t)d, (size_t)c);
    uint64_t id, check;
    if (got && (w->a < 0 || w->seen_cleared || !B->get_ident(h, (size_t)d, &id, &check) ||
                id != mid(w->a)))
      fail(m, "weak_get answered a block it should not", k);
    if (!got && w->a >= 0 && !w->at_risk) fail(m, "a weak reference was cleared too early", k);
    if (!got) w->seen_cleared = 1;
    m->cell[d] = got ? w->a : -1;
  } else if (op < 96) { /* ephe_new */
    if (m->nobj >= MODEL_OBJS - 4) return;
    int key = m->cell[c], datum = m->cell[e];
    m->cell[d] = -1;
    if (B->ephe_new(h, (size_t)d, (size_t)c, (size_t)e)) {
      int j = new_obj(m, M_EPHE, 0);
      m->obj[j].a = key;
      m->obj[j].b = key >= 0 ? datum : -1;
      B->set_ident(h, (size_t)d, mid(j), ~mid(j));
      m->cell[d] = j;
    }
  } else { /* ephe_get */
    if (k < 0 || m->obj[k].kind != M_EPHE) return;
    mobj *x = &m->obj[k];
    int got = B->ephe_get(h, (size_t)d, (size_t)c);
    uint64_t id, check;
    int full = B->get_ident(h, (size_t)d, &id, &check);
    if (got && (x->a < 0 || x->seen_cleared || full != (x->b >= 0) || (full && id != mid(x->b))))
      fail(m, "ephe_get answered a datum it should not", k);
    if (!got && x->a >= 0 && !x->at_risk) fail(m, "an ephemeron lost its datum too early", k);
    if (!got) x->seen_cleared = 1;
    m->cell[d] = got ? x->b : -1;
  }
  char mark[MODEL_OBJS];
  reach(m, mark, 0);
  mark_risks(m, mark);
  verify_cells(m);
  size_t n = B->check(h, out, FINDINGS_MAX);
  if (n > 0) {
    print_findings(out, n);
    if (!m->bad) print_verdict(&out[0]);
    fail(m, "the deep check found something", -1);
  }
  if (kind >= 0) verify_walk(m, kind == FUZZ_COLLECT_FULL);
}

/* LUAB_TEST_SEEDS and LUAB_TEST_OPS make a longer run (by hand; the test's own is small). */
static void random_programs(void) {
  static model m;
  fuzz_finding out[FINDINGS_MAX];
  const char *env_seeds = getenv("LUAB_TEST_SEEDS"), *env_ops = getenv("LUAB_TEST_OPS");
  uint64_t seeds = env_seeds ? strtoull(env_seeds, NULL, 10) : 40;
  int ops = env_ops ? atoi(env_ops) : 400;
  for (uint64_t seed = 1; seed <= seeds; seed++) {
    memset(&m, 0, sizeof m);
    m.rng = seed * UINT64_C(0x9E3779B97F4A7C15);
    for (int c = 0; c <= RCELLS; c++) m.cell[c] = -1;
    fuzz_backend_config cfg = {
        .cells = RCELLS, .out = stderr, .events = {.user = &m, .finalize = model_finalize}};
    cfg.params = seed % 3 == 0 ? "generational" : NULL;
    m.h = B->create(&cfg);
    for (int i = 0; i < ops && !m.bad; i++) random_op(&m, out);
    if (!m.bad) {
      B->collect(m.h, FUZZ_COLLECT_FULL, 0);
      verify_walk(&m, 1);
      if (B->check(m.h, out, FINDINGS_MAX) != 0) fail(&m, "the final deep check", -1);
    }
    if (m.bad) fprintf(stderr, "  (seed %llu)\n", (unsigned long long)seed);
    CHECK(!m.bad);
    B->destroy(m.h);
  }
}

int main(void) {
  RUN(random_programs);
  return summary();
}
