/* Small helpers shared by the C tests: CHECK macros, view checks, the text core's exact
 * rebuild, and a loop that drives an engine on a synthetic clock, acking every send, until
 * it goes idle. */
#ifndef REPLYSTREAM_TEST_HARNESS_H
#define REPLYSTREAM_TEST_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replystream.h"

#if defined(__GNUC__)
#define HARNESS_UNUSED __attribute__((unused))
#else
#define HARNESS_UNUSED
#endif

#define CHECK(cond)                                                                 \
    do {                                                                            \
        if (!(cond)) {                                                              \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                                \
        }                                                                           \
    } while (0)

#define CHECK_CODE(expr, want)                                                          \
    do {                                                                                \
        replystream_result got_ = (expr);                                               \
        if (got_ != (want)) {                                                           \
            fprintf(stderr, "%s:%d: %s returned %u (%s), expected %u (%s)\n", __FILE__, \
                    __LINE__, #expr, (unsigned)got_, replystream_result_str(got_),      \
                    (unsigned)(want), replystream_result_str(want));                    \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

/* A view handed out by the library: never NULL, NUL right after its bytes, no interior
 * NUL in UTF-8 text we pushed (the tests push none). */
HARNESS_UNUSED static void check_view(replystream_str s) {
    CHECK(s.ptr != NULL);
    CHECK(s.ptr[s.len] == '\0');
}

/* The engine's last error contains `needle`. */
HARNESS_UNUSED static void check_detail(const replystream_engine *engine, const char *needle) {
    replystream_str s;
    CHECK_CODE(replystream_engine_last_error(engine, &s), REPLYSTREAM_OK);
    check_view(s);
    if (strstr(s.ptr, needle) == NULL) {
        fprintf(stderr, "last error \"%s\" does not mention \"%s\"\n", s.ptr, needle);
        exit(1);
    }
}

/* The last constructor error on this thread contains `needle`. */
HARNESS_UNUSED static void check_new_error(const char *needle) {
    replystream_str s;
    CHECK_CODE(replystream_new_error(&s), REPLYSTREAM_OK);
    check_view(s);
    if (strstr(s.ptr, needle) == NULL) {
        fprintf(stderr, "new error \"%s\" does not mention \"%s\"\n", s.ptr, needle);
        exit(1);
    }
}

/* The pieces alone give back `text` exactly: over all pieces, `lead`, the bytes of `text`
 * between source_in_text_start and _end, then `sep`. Those bytes are the input's
 * source_start.._end, and what lies outside them in `text` is synthetic, as the flags say.
 * A text of only whitespace has no pieces. */
HARNESS_UNUSED static void rebuilds_exactly(const replystream_blocks *blocks, const char *text,
                                            size_t len) {
    size_t n = replystream_blocks_count(blocks);
    if (n == 0) {
        for (size_t i = 0; i < len; i++) {
            CHECK(text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r');
        }
        return;
    }
    char *rebuilt = malloc(len + 1);
    CHECK(rebuilt != NULL);
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        const replystream_block *b = replystream_blocks_get(blocks, i);
        check_view(b->lead);
        check_view(b->sep);
        size_t start = b->source_in_text_start, end = b->source_in_text_end;
        CHECK(start <= end && end <= b->text.len);
        CHECK(end - start == b->source_end - b->source_start);
        CHECK(memcmp(b->text.ptr + start, text + b->source_start, end - start) == 0);
        /* Synthetic text only where a flag says so. */
        CHECK((start > 0) == (b->fence_reopened || b->indent_reopened ||
                              b->table_header_repeated || b->spans_reopened));
        CHECK(!b->indent_reopened || (start == 4 && memcmp(b->text.ptr, "    ", 4) == 0));
        CHECK((end < b->text.len) == (b->fence_closed || b->spans_closed));
        CHECK(at + b->lead.len + (end - start) + b->sep.len <= len);
        memcpy(rebuilt + at, b->lead.ptr, b->lead.len);
        at += b->lead.len;
        CHECK(at == b->source_start); /* the lead ends where the source starts */
        memcpy(rebuilt + at, b->text.ptr + start, end - start);
        at += end - start;
        memcpy(rebuilt + at, b->sep.ptr, b->sep.len);
        at += b->sep.len;
    }
    CHECK(at == len);
    CHECK(memcmp(rebuilt, text, len) == 0);
    free(rebuilt);
}

/* The next deadline, REPLYSTREAM_NONE when there is none. */
HARNESS_UNUSED static uint64_t deadline_of(const replystream_engine *engine) {
    uint64_t deadline = 0;
    bool has = replystream_engine_next_deadline(engine, &deadline);
    CHECK(has == (deadline != REPLYSTREAM_NONE));
    return deadline;
}

/* Moves the clock `*now_ms` to the next deadline (never back) and pushes a timer there;
 * false (and nothing pushed) when there is no deadline. */
HARNESS_UNUSED static bool fire_next_deadline(replystream_engine *engine, uint64_t *now_ms) {
    uint64_t deadline = deadline_of(engine);
    if (deadline == REPLYSTREAM_NONE) {
        return false;
    }
    if (deadline > *now_ms) {
        *now_ms = deadline;
    }
    CHECK_CODE(replystream_engine_push_timer(engine, *now_ms), REPLYSTREAM_OK);
    return true;
}

HARNESS_UNUSED static replystream_options *new_options(void) {
    replystream_options *opts = NULL;
    CHECK_CODE(replystream_options_new(&opts), REPLYSTREAM_OK);
    CHECK(opts != NULL);
    return opts;
}

HARNESS_UNUSED static replystream_engine *new_engine(const char *channel,
                                                     const replystream_options *opts) {
    replystream_engine *engine = NULL;
    CHECK_CODE(replystream_engine_new(channel, strlen(channel), opts, 42, &engine),
               REPLYSTREAM_OK);
    CHECK(engine != NULL);
    return engine;
}

/* An engine with small chunks, so short texts stream in several blocks. */
HARNESS_UNUSED static replystream_engine *new_small_engine(const char *channel) {
    replystream_options *opts = new_options();
    CHECK_CODE(replystream_options_set_chunk_min(opts, 40), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_chunk_max(opts, 120), REPLYSTREAM_OK);
    replystream_engine *engine = new_engine(channel, opts);
    replystream_options_free(opts);
    return engine;
}

/* What a drive loop saw. */
typedef struct {
    char text[8192]; /* every sent text, each followed by '\n' */
    size_t text_len;
    unsigned sends, media, timers_armed, timers_fired, idles, aborts;
    unsigned kinds[4]; /* sends per replystream_send_kind */
    size_t max_send_len;    /* the longest send text, in bytes */
    size_t max_send_lines;  /* the most lines in one send */
    uint64_t now_ms;
} drive_log;

/* Checks a SEND's views and appends its text to the log. */
HARNESS_UNUSED static void log_send(drive_log *log, const replystream_engine *engine,
                                    const replystream_action *a) {
    check_view(a->text);
    check_view(a->markdown);
    /* The format's static name matches its number; only telegram-entities has entities. */
    check_view(a->format_name);
    CHECK(replystream_format_name(a->format) != NULL);
    CHECK(strcmp(a->format_name.ptr, replystream_format_name(a->format)) == 0);
    CHECK((a->entities == NULL) == (a->entity_count == 0));
    CHECK(a->entity_count == 0 || a->format == REPLYSTREAM_FORMAT_TELEGRAM_ENTITIES);
    for (size_t i = 0; i < a->entity_count; i++) {
        check_view(a->entities[i].type_name);
        check_view(a->entities[i].url);
        check_view(a->entities[i].language);
    }
    /* In format markdown the text to post is the Markdown itself. */
    CHECK(a->format != REPLYSTREAM_FORMAT_MARKDOWN ||
          (a->text.len == a->markdown.len && memcmp(a->text.ptr, a->markdown.ptr, a->text.len) == 0));
    check_view(a->reply_to_id);
    check_view(a->message_ref);
    CHECK(a->has_message_ref || a->message_ref.len == 0);
    CHECK(a->send_kind <= REPLYSTREAM_SEND_PREVIEW);
    CHECK(a->op <= REPLYSTREAM_OP_DRAFT);
    CHECK(a->op == REPLYSTREAM_OP_CREATE || a->has_message_key);
    CHECK((a->media == NULL) == (a->media_count == 0));
    for (size_t i = 0; i < a->media_count; i++) {
        replystream_str m;
        CHECK_CODE(replystream_action_media(engine, i, &m), REPLYSTREAM_OK);
        check_view(m);
        CHECK(m.len > 0);
        CHECK(m.ptr == a->media[i].ptr && m.len == a->media[i].len);
    }
    replystream_str past;
    CHECK_CODE(replystream_action_media(engine, a->media_count, &past), REPLYSTREAM_OUT_OF_RANGE);
    CHECK(log->text_len + a->text.len + 1 < sizeof log->text);
    memcpy(log->text + log->text_len, a->text.ptr, a->text.len);
    log->text_len += a->text.len;
    log->text[log->text_len++] = '\n';
    log->text[log->text_len] = '\0';
    size_t lines = 1;
    for (size_t i = 0; i < a->text.len; i++) {
        lines += a->text.ptr[i] == '\n';
    }
    if (lines > log->max_send_lines) {
        log->max_send_lines = lines;
    }
    if (a->text.len > log->max_send_len) {
        log->max_send_len = a->text.len;
    }
    log->sends++;
    log->media += (unsigned)a->media_count;
    log->kinds[a->send_kind]++;
}

/* Polls every pending action; acks each SEND `ack_delay_ms` later with a message ref. */
HARNESS_UNUSED static void drain(replystream_engine *engine, drive_log *log, uint64_t ack_delay_ms) {
    for (;;) {
        const replystream_action *a = NULL;
        replystream_result r = replystream_engine_poll_action(engine, &a);
        CHECK(a != NULL);
        if (r == REPLYSTREAM_DONE) {
            CHECK(a->kind == REPLYSTREAM_ACTION_NONE);
            return;
        }
        CHECK_CODE(r, REPLYSTREAM_OK);
        switch (a->kind) {
        case REPLYSTREAM_ACTION_SEND: {
            log_send(log, engine, a);
            log->now_ms += ack_delay_ms;
            char ref[32];
            int n = snprintf(ref, sizeof ref, "msg-%llu", (unsigned long long)a->send_id);
            CHECK_CODE(replystream_engine_push_delivered(engine, a->send_id, ref, (size_t)n,
                                                         log->now_ms),
                       REPLYSTREAM_OK);
            break;
        }
        case REPLYSTREAM_ACTION_ARM_TIMER:
            CHECK(a->has_deadline || a->deadline_ms == 0);
            log->timers_armed++;
            break;
        case REPLYSTREAM_ACTION_IDLE:
            log->idles++;
            break;
        case REPLYSTREAM_ACTION_ABORT:
            log->aborts++;
            break;
        default:
            CHECK(!"unknown action kind");
        }
    }
}

/* Drains, then jumps the clock to each deadline and fires it, until IDLE (or nothing is
 * left to wait for). Bounded, so a stuck engine fails instead of hanging. */
HARNESS_UNUSED static void run_until_idle(replystream_engine *engine, drive_log *log) {
    for (int step = 0; step < 10000; step++) {
        drain(engine, log, 7);
        if (log->idles > 0 || !fire_next_deadline(engine, &log->now_ms)) {
            return;
        }
        log->timers_fired++;
    }
    CHECK(!"engine did not settle");
}

#endif
