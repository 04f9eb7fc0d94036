/* A bounded random-sequence test over the whole C ABI (a fuzz smoke that needs no nightly
 * toolchain): for a fixed range of seeds, any push in any order, random acks (real and
 * made-up ids), random times (backwards and near UINT64_MAX included), random bytes
 * (invalid UTF-8 and characters cut anywhere included), random options (any format, on any
 * channel, and a bad format name), polls and getters, and the text core and the renderer on
 * random text. Under AddressSanitizer and UBSan this checks that
 * nothing crashes, reads out of bounds or leaks; the test itself checks that every result
 * is a documented code (never PANIC), that every error has a detail and every success an
 * empty one, that every view the library hands out is NUL-terminated UTF-8, and that every
 * entity is a non-empty span inside its text, with a url exactly when it is a text_link.
 *
 * REPLYSTREAM_FUZZ_SEEDS=N runs seeds 1..N (default 150). */
#include "harness.h"

static uint64_t rng_state;

static uint64_t next_u64(void) {
    /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

static unsigned below(unsigned n) {
    return (unsigned)(next_u64() % n);
}

/* Valid UTF-8, checked here (not with the library). */
static int is_utf8(const char *p, size_t len) {
    const unsigned char *s = (const unsigned char *)p;
    size_t i = 0;
    while (i < len) {
        unsigned c = s[i];
        size_t n;
        unsigned min;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            n = 1, min = 0x80;
        } else if (c >= 0xE0 && c <= 0xEF) {
            n = 2, min = 0x800;
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 3, min = 0x10000;
        } else {
            return 0;
        }
        unsigned cp = c & (0x3F >> n);
        for (size_t k = 1; k <= n; k++) {
            if (i + k >= len || (s[i + k] & 0xC0) != 0x80) {
                return 0;
            }
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            return 0;
        }
        i += n + 1;
    }
    return 1;
}

static void check_text_view(replystream_str s) {
    check_view(s);
    CHECK(s.len < ((size_t)1 << 30));
    CHECK(is_utf8(s.ptr, s.len));
}

/* UTF-16 units of UTF-8 text (valid UTF-8: one unit per scalar, two for 4-byte ones). */
static size_t utf16_units(replystream_str s) {
    size_t n = 0;
    for (size_t i = 0; i < s.len; i++) {
        unsigned char c = (unsigned char)s.ptr[i];
        if ((c & 0xC0) != 0x80) {
            n += c >= 0xF0 ? 2 : 1;
        }
    }
    return n;
}

/* A text's format and entities: a known format with its static name, entities only with
 * telegram-entities, each a non-empty span inside the text with valid views. */
static void check_entities(replystream_format format, replystream_str text,
                           const replystream_entity *entities, size_t count) {
    CHECK(replystream_format_name(format) != NULL);
    CHECK(count == 0 || format == REPLYSTREAM_FORMAT_TELEGRAM_ENTITIES);
    size_t units = utf16_units(text);
    for (size_t i = 0; i < count; i++) {
        const replystream_entity *e = &entities[i];
        CHECK(e->kind >= REPLYSTREAM_ENTITY_BOLD && e->kind <= REPLYSTREAM_ENTITY_EXPANDABLE_BLOCKQUOTE);
        check_text_view(e->type_name);
        check_text_view(e->url);
        check_text_view(e->language);
        CHECK(e->length > 0 && e->offset + e->length <= units);
        CHECK((e->url.len > 0) == (e->kind == REPLYSTREAM_ENTITY_TEXT_LINK));
    }
}

/* Pieces the random text is built from: prose, Markdown, CJK, emoji, ZWJ sequences,
 * combining marks, CRLF, tags and directives, tokens, an interior NUL. */
static const char *const PIECES[] = {
    "Hello", " ", "world.", "\n", "\n\n", "\r\n", "```", "```py\n", "~~~\n", "`code`",
    "    indented\n", "- item\n", "# Title\n", "\xe6\xb2\xb3\xe6\xb5\x81\xe3\x80\x82",
    "\xf0\x9f\xa6\x80", "\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x92\xbb", "e\xcc\x81",
    "\xf0\x9f\x87\xaf\xf0\x9f\x87\xb5", "<think>", "</think>", "<final>", "</final>",
    "[[reply_to_current]]", "[[reply_to: 123]]", "[[audio_as_voice]]",
    "MEDIA: https://x.test/a.png\n", "NO_REPLY", "HEARTBEAT_OK", "\x00",
    "A long sentence that goes on for a while, with commas, and more words. ",
    "Another sentence, a little shorter. ", "Short one. ",
};
#define NPIECES (sizeof PIECES / sizeof PIECES[0])

/* Bytes that are never valid where they are put. */
static const char *const INVALID[] = {"\xff", "\xa9", "\xed\xa0\x80", "\xc3(", "\xc0\xaf"};

static size_t append(char *buf, size_t len, size_t cap, const char *p, size_t plen) {
    if (len + plen > cap) {
        return len;
    }
    memcpy(buf + len, p, plen);
    return len + plen;
}

/* Fills `buf` with random pieces; sometimes with invalid bytes inside (1 in 12), sometimes
 * ending inside a character (1 in 6: the next delta may complete it). */
static size_t random_text(char *buf, size_t cap) {
    size_t len = 0, n = below(14);
    for (size_t i = 0; i < n; i++) {
        const char *p = PIECES[below(NPIECES)];
        len = append(buf, len, cap, p, p[0] == '\0' ? 1 : strlen(p));
    }
    if (below(12) == 0) {
        const char *bad = INVALID[below(sizeof INVALID / sizeof INVALID[0])];
        size_t at = len == 0 ? 0 : below((unsigned)len + 1);
        while (at > 0 && at < len && ((unsigned char)buf[at] & 0xC0) == 0x80) {
            at--; /* insert at a character boundary, so only `bad` is invalid */
        }
        size_t blen = strlen(bad);
        if (len + blen <= cap) {
            memmove(buf + at + blen, buf + at, len - at);
            memcpy(buf + at, bad, blen);
            len += blen;
        }
    }
    if (below(6) == 0) {
        static const char *const cut[] = {"\xc3", "\xe2\x82", "\xf0\x9f\xa6"};
        const char *c = cut[below(3)];
        len = append(buf, len, cap, c, strlen(c));
    }
    return len;
}

/* A random time: mostly forward, sometimes backwards, rarely near the end of time. */
static uint64_t random_time(uint64_t *now) {
    switch (below(20)) {
    case 0:
        return *now > 100 ? *now - below(100) : 0;
    case 1:
        return UINT64_MAX - below(3);
    default:
        *now += below(1500);
        return *now;
    }
}

typedef struct {
    replystream_engine *engine;
    uint64_t now;
    uint64_t sends[16]; /* ids of SENDs seen and not yet acked */
    size_t nsends;
    unsigned calls, errors, actions;
} fuzz_state;

static const replystream_result KNOWN_MAX = REPLYSTREAM_ERROR;

/* Every result is a documented code; never a panic; errors have a detail, successes none. */
static void check_result(fuzz_state *st, replystream_result r) {
    st->calls++;
    CHECK(r <= KNOWN_MAX);
    CHECK(r != REPLYSTREAM_PANIC && r != REPLYSTREAM_POISONED && r != REPLYSTREAM_ERROR);
    replystream_str s;
    CHECK_CODE(replystream_engine_last_error(st->engine, &s), REPLYSTREAM_OK);
    check_text_view(s);
    if (replystream_result_is_error(r)) {
        st->errors++;
        CHECK(s.len > 0);
    } else {
        CHECK(s.len == 0);
    }
}

static void check_action(fuzz_state *st, const replystream_action *a) {
    st->actions++;
    CHECK(a->kind <= REPLYSTREAM_ACTION_IDLE);
    check_text_view(a->text);
    check_text_view(a->reply_to_id);
    check_text_view(a->message_ref);
    if (a->kind != REPLYSTREAM_ACTION_SEND) {
        CHECK(a->text.len == 0 && a->media_count == 0 && a->media == NULL);
        return;
    }
    CHECK(a->send_kind <= REPLYSTREAM_SEND_PREVIEW);
    CHECK(a->op <= REPLYSTREAM_OP_DRAFT);
    CHECK(a->op == REPLYSTREAM_OP_CREATE || a->has_message_key);
    CHECK(a->lane <= REPLYSTREAM_LANE_STATUS);
    CHECK(a->reply_to <= REPLYSTREAM_REPLY_ID);
    CHECK(a->reply_to == REPLYSTREAM_REPLY_ID || a->reply_to_id.len == 0);
    CHECK((a->media == NULL) == (a->media_count == 0));
    check_text_view(a->markdown);
    check_text_view(a->format_name);
    CHECK(strcmp(a->format_name.ptr, replystream_format_name(a->format)) == 0);
    CHECK((a->entities == NULL) == (a->entity_count == 0));
    check_entities(a->format, a->text, a->entities, a->entity_count);
    for (size_t i = 0; i < a->media_count; i++) {
        check_text_view(a->media[i]);
        CHECK(a->media[i].len > 0);
        replystream_str m;
        CHECK_CODE(replystream_action_media(st->engine, i, &m), REPLYSTREAM_OK);
        CHECK(m.ptr == a->media[i].ptr);
    }
    if (st->nsends < 16) {
        st->sends[st->nsends++] = a->send_id;
    }
}

static void poll_some(fuzz_state *st) {
    unsigned n = below(4) == 0 ? 1000 : below(3);
    for (unsigned i = 0; i < n; i++) {
        const replystream_action *a = NULL;
        replystream_result r = replystream_engine_poll_action(st->engine, &a);
        check_result(st, r);
        CHECK(a != NULL);
        if (r == REPLYSTREAM_DONE) {
            CHECK(a->kind == REPLYSTREAM_ACTION_NONE);
            return;
        }
        CHECK_CODE(r, REPLYSTREAM_OK);
        check_action(st, a);
        if (a->kind == REPLYSTREAM_ACTION_SEND && below(2) == 0) {
            /* A prompt host: ack at once (the record stays valid across pushes). */
            uint64_t id = a->send_id;
            if (st->nsends > 0 && st->sends[st->nsends - 1] == id) {
                st->nsends--;
            }
            check_result(st, replystream_engine_push_delivered(st->engine, id, "m", 1, st->now));
            CHECK(a->send_id == id);
        }
    }
}

/* An id to ack: a real one (taken off the list) or a made-up one. */
static uint64_t ack_id(fuzz_state *st) {
    if (st->nsends > 0 && below(4) != 0) {
        size_t i = below((unsigned)st->nsends);
        uint64_t id = st->sends[i];
        st->sends[i] = st->sends[--st->nsends];
        return id;
    }
    return below(3) == 0 ? UINT64_MAX - below(2) : below(40);
}

static replystream_options *random_options(void) {
    replystream_options *o = new_options();
    if (below(2)) {
        replystream_options_set_chunk_min(o, below(200));
        replystream_options_set_chunk_max(o, below(400));
    }
    if (below(3) == 0) {
        replystream_options_set_text_limit(o, 10 + below(300)); /* below the metric's smallest limit is refused */
    }
    if (below(3) == 0) {
        replystream_options_set_metric(o, below(5)); /* 4 is refused */
    }
    if (below(4) == 0) {
        replystream_options_set_max_lines(o, below(6));
    }
    if (below(3) == 0) {
        replystream_options_set_coalesce_idle_ms(o, below(3000));
    }
    if (below(3) == 0) {
        replystream_options_set_human_delay(o, below(4), below(2000), below(3000));
    }
    if (below(3) == 0) {
        replystream_options_set_delivery_timeout_ms(o, below(4000));
    }
    if (below(3) == 0) {
        replystream_options_set_reasoning(o, below(3));
    }
    if (below(3) == 0) {
        replystream_options_set_break_mode(o, below(2));
    }
    if (below(3) == 0) {
        replystream_options_set_chunk_mode(o, below(2));
    }
    if (below(4) == 0) {
        replystream_options_set_block_streaming(o, below(2));
    }
    if (below(4) == 0) {
        replystream_options_set_response_prefix(o, "[{model}]", 9);
        replystream_options_set_model(o, "acme/m-1", 8);
    }
    if (below(4) == 0) {
        replystream_options_set_require_final_tag(o, 1);
    }
    if (below(4) == 0) {
        replystream_options_set_preview(o, below(3));
    }
    if (below(2) == 0) {
        /* Any format (refused on use where the channel cannot show it), or a bad name. */
        static const char *const formats[] = {"markdown", "discord", "telegram-html",
                                              "telegram-entities", "slack-mrkdwn", "whatsapp",
                                              "plain", "markdownv2"};
        const char *name = formats[below(8)];
        replystream_result r = replystream_options_set_format(o, name, strlen(name));
        CHECK(r == (strcmp(name, "markdownv2") == 0 ? REPLYSTREAM_INVALID_CONFIG : REPLYSTREAM_OK));
    }
    if (below(3) == 0) {
        static const char *const modes[] = {"code", "bullets", "off", "native", "block"};
        const char *name = modes[below(5)];
        CHECK_CODE(replystream_options_set_table_mode(o, name, strlen(name)), REPLYSTREAM_OK);
    }
    if (below(4) == 0) {
        replystream_options_set_allow_mass_mentions(o, below(2));
    }
    if (below(4) == 0) {
        replystream_options_set_caption_limit(o, below(200));
    }
    return o;
}

static void text_core(void) {
    char buf[512];
    size_t len = random_text(buf, sizeof buf);
    replystream_options *o = random_options();
    replystream_blocks *blocks = NULL;
    replystream_result r = below(2) ? replystream_split(NULL, 0, o, buf, len, &blocks)
                                    : replystream_chunk(NULL, 0, o, buf, len, &blocks);
    CHECK(r <= KNOWN_MAX && r != REPLYSTREAM_PANIC);
    CHECK((r == REPLYSTREAM_OK) == (blocks != NULL));
    size_t n = replystream_blocks_count(blocks);
    for (size_t i = 0; i < n; i++) {
        const replystream_block *b = replystream_blocks_get(blocks, i);
        check_text_view(b->text);
        check_text_view(b->sep);
        CHECK(b->source_start <= b->source_end && b->source_end <= len);
    }
    if (blocks != NULL) {
        rebuilds_exactly(blocks, buf, len);
    }
    replystream_blocks_free(blocks);

    /* The same text rendered (refused only for options the channel cannot take). */
    static const char *const channels[] = {"telegram", "discord", "slack", "generic"};
    const char *channel = channels[below(4)];
    replystream_rendered *rendered = NULL;
    r = replystream_render(channel, strlen(channel), o, buf, len, &rendered);
    CHECK(r == REPLYSTREAM_OK || r == REPLYSTREAM_INVALID_CONFIG || r == REPLYSTREAM_INVALID_UTF8);
    CHECK((r == REPLYSTREAM_OK) == (rendered != NULL));
    if (rendered != NULL) {
        replystream_str text = replystream_rendered_text(rendered);
        check_text_view(text);
        size_t count = replystream_rendered_entity_count(rendered);
        check_entities(replystream_rendered_format(rendered), text,
                       replystream_rendered_entity(rendered, 0), count);
        CHECK(replystream_rendered_entity(rendered, count) == NULL);
    }
    replystream_rendered_free(rendered);
    replystream_options_free(o);
}

/* The turn's outcome, if it has one, is consistent; returns whether there is one. */
static bool check_outcome(const replystream_engine *e) {
    replystream_outcome *o = NULL;
    CHECK_CODE(replystream_engine_outcome(e, &o), REPLYSTREAM_OK);
    if (o == NULL) {
        return false;
    }
    CHECK(o->ending <= REPLYSTREAM_TURN_CANCELLED);
    CHECK(o->all_delivered == (o->ending != REPLYSTREAM_TURN_CANCELLED && o->undelivered_count == 0));
    CHECK((o->undelivered == NULL) == (o->undelivered_count == 0));
    bool finals = false;
    for (size_t i = 0; i < o->undelivered_count; i++) {
        const replystream_undelivered *u = &o->undelivered[i];
        check_text_view(u->text);
        CHECK(u->send_kind != REPLYSTREAM_SEND_PREVIEW);
        CHECK(u->reason <= REPLYSTREAM_UNDELIVERED_TIMED_OUT);
        CHECK(u->text.len > 0 || u->media_count > 0);
        for (size_t m = 0; m < u->media_count; m++) {
            check_text_view(u->media[m]);
        }
        finals |= u->send_kind == REPLYSTREAM_SEND_FINAL;
    }
    CHECK(o->final_delivered == !finals);
    replystream_outcome_free(o);
    return true;
}

static void run_seed(uint64_t seed, unsigned *calls, unsigned *errors, unsigned *actions) {
    rng_state = seed * 0x9E3779B97F4A7C15ull + 1;
    static const char *const channels[] = {"telegram", "discord", "slack", "signal",
                                           "whatsapp", "imessage", "googlechat", "generic"};
    const char *channel = channels[below(8)];
    replystream_options *opts = random_options();
    fuzz_state st;
    memset(&st, 0, sizeof st);
    replystream_result made =
        replystream_engine_new(channel, strlen(channel), opts, seed, &st.engine);
    replystream_options_free(opts);
    if (made != REPLYSTREAM_OK) {
        CHECK_CODE(made, REPLYSTREAM_INVALID_CONFIG);
        CHECK(st.engine == NULL);
        check_new_error("invalid configuration");
        return;
    }
    char buf[256];
    unsigned steps = 50 + below(350);
    for (unsigned step = 0; step < steps; step++) {
        size_t len = random_text(buf, sizeof buf);
        replystream_engine *e = st.engine;
        replystream_result r;
        replystream_str media[3];
        size_t nmedia = below(4);
        for (size_t i = 0; i < nmedia; i++) {
            static const char *const urls[] = {"https://x.test/a.png", "/tmp/b.ogg", "",
                                               "\xff"};
            media[i].ptr = urls[below(4)];
            media[i].len = strlen(media[i].ptr);
        }
        uint64_t t = random_time(&st.now);
        switch (below(22)) {
        case 0: r = replystream_engine_push_message_start(e, t); break;
        case 1: case 2: case 3: r = replystream_engine_push_text_delta(e, buf, len, t); break;
        case 4: r = replystream_engine_push_text_snapshot(e, buf, len, t); break;
        case 5: r = replystream_engine_push_text_end(e, below(2) ? buf : NULL, below(2) ? len : 0, t); break;
        case 6: r = replystream_engine_push_thinking_delta(e, buf, len, t); break;
        case 7: r = replystream_engine_push_thinking_end(e, t); break;
        case 8: r = replystream_engine_push_tool_start(e, buf, len, t); break;
        case 9: r = replystream_engine_push_tool_result(e, buf, len, nmedia ? media : NULL, nmedia, t); break;
        case 10: r = replystream_engine_push_media(e, buf, len, nmedia ? media : NULL, nmedia, t); break;
        case 11: r = replystream_engine_push_message_end(e, below(2) ? buf : NULL, below(2) ? len : 0, t); break;
        case 12: r = replystream_engine_push_final_reply(e, buf, len, nmedia ? media : NULL, nmedia, t); break;
        /* Turn ends are rarer, so most of a run streams. */
        case 13: r = below(16) ? replystream_engine_push_text_delta(e, buf, len, t) : replystream_engine_push_finish(e, t); break;
        case 14: r = below(24) ? replystream_engine_push_timer(e, t) : replystream_engine_push_fail(e, buf, len, t); break;
        case 15: r = below(32) ? replystream_engine_push_timer(e, t) : replystream_engine_push_cancel(e, t); break;
        case 16: {
            uint64_t d;
            if (replystream_engine_next_deadline(e, &d)) {
                t = d > st.now ? d : st.now;
                st.now = t == UINT64_MAX ? st.now : t;
            }
            r = replystream_engine_push_timer(e, t);
            break;
        }
        case 17: case 18:
            r = replystream_engine_push_delivered(e, ack_id(&st), below(2) ? buf : NULL,
                                                  below(2) ? len : 0, t);
            break;
        case 19:
            r = replystream_engine_push_delivery_failed(
                e, ack_id(&st), below(2) ? REPLYSTREAM_NONE : below(5000), below(3) == 0, t);
            break;
        case 20: r = replystream_engine_set_seq(e, below(30)); break;
        default: {
            /* Getters on a const handle: they leave the last error as it was. */
            replystream_str before, after;
            CHECK_CODE(replystream_engine_last_error(e, &before), REPLYSTREAM_OK);
            replystream_stats stats;
            CHECK_CODE(replystream_engine_stats(e, &stats, sizeof stats), REPLYSTREAM_OK);
            CHECK(stats.delivered <= stats.sends);
            (void)replystream_engine_is_done(e);
            (void)check_outcome(e);
            replystream_str m;
            (void)replystream_action_media(e, below(3), &m);
            CHECK_CODE(replystream_engine_last_error(e, &after), REPLYSTREAM_OK);
            CHECK(before.ptr == after.ptr && before.len == after.len);
            st.calls++;
            poll_some(&st);
            continue;
        }
        }
        check_result(&st, r);
        poll_some(&st);
    }
    /* Wind down: finish (it may be refused), ack everything, fire deadlines; bounded. */
    check_result(&st, replystream_engine_push_finish(st.engine, st.now));
    for (int i = 0; i < 200 && !replystream_engine_is_done(st.engine); i++) {
        poll_some(&st);
        while (st.nsends > 0) {
            check_result(&st, replystream_engine_push_delivered(st.engine, ack_id(&st), NULL, 0,
                                                                st.now));
            poll_some(&st);
        }
        uint64_t d;
        if (!replystream_engine_next_deadline(st.engine, &d)) {
            poll_some(&st);
            break;
        }
        st.now = d > st.now ? d : st.now;
        check_result(&st, replystream_engine_push_timer(st.engine, st.now));
    }
    /* A turn that is over has an outcome. */
    CHECK(!replystream_engine_is_done(st.engine) || check_outcome(st.engine));
    if (below(5) == 0) {
        text_core();
    }
    replystream_engine_free(st.engine);
    *calls += st.calls;
    *errors += st.errors;
    *actions += st.actions;
}

int main(void) {
    unsigned seeds = 150;
    const char *env = getenv("REPLYSTREAM_FUZZ_SEEDS");
    if (env != NULL && atoi(env) > 0) {
        seeds = (unsigned)atoi(env);
    }
    unsigned calls = 0, errors = 0, actions = 0;
    for (uint64_t seed = 1; seed <= seeds; seed++) {
        run_seed(seed, &calls, &errors, &actions);
    }
    CHECK(calls > seeds * 50);
    CHECK(errors > 0 && actions > 0);
    printf("fuzz: ok, %u seeds, %u calls (%u refused), %u actions\n", seeds, calls, errors,
           actions);
    return 0;
}
