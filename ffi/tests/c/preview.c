/* A live preview through the C ABI, against a small chat written here: the preview is
 * created under a message key, acked with a platform id, edited with that id as
 * message_ref, and edited into the final; a 429 pauses the next send until exactly its
 * retry_after; the draft transport sends DRAFT updates and a normal final. The chat must end
 * showing exactly the reply, with no cursor. The preview counters of replystream_engine_stats
 * match what the chat saw, and an update that would show nothing new is skipped. */
#include "harness.h"

static const char REPLY[] =
    "Here is the plan. First we measure the river at the crossing, then we mark the safe "
    "stones with chalk, and finally we cross one at a time while the others hold the rope. "
    "If the water rises above the second mark, we wait on the bank until morning.";

static const char CURSOR[] = "\xe2\x96\x88"; /* U+2588, the default cursor */

/* The chat: messages by id, and one draft bubble. */
typedef struct {
    char ids[8][16];
    char texts[8][1024];
    unsigned count;
    char draft[1024];
    unsigned next_id, creates, edits, deletes, drafts;
} chat;

static int find(const chat *c, replystream_str ref) {
    for (unsigned i = 0; i < c->count; i++) {
        if (strlen(c->ids[i]) == ref.len && memcmp(c->ids[i], ref.ptr, ref.len) == 0) {
            return (int)i;
        }
    }
    return -1;
}

static void set_text(char *dst, replystream_str text) {
    CHECK(text.len < 1024);
    memcpy(dst, text.ptr, text.len);
    dst[text.len] = '\0';
}

typedef struct {
    chat chat;
    uint64_t now_ms;
    uint64_t preview_times[64];
    unsigned previews;
    unsigned finals, final_edits;
    unsigned fail_send; /* the n-th send (1-based) gets a 429; 0: none */
    uint64_t retry_after_ms;
    uint64_t failed_at, first_after_failure;
    unsigned sends;
    bool idle;
    replystream_stats stats; /* the engine's counters at the end */
} run;

/* Applies one SEND to the chat and acks it (or fails it, once). */
static void deliver(replystream_engine *engine, run *r, const replystream_action *a) {
    check_view(a->text);
    check_view(a->message_ref);
    r->sends++;
    if (r->failed_at != 0 && r->first_after_failure == 0) {
        r->first_after_failure = r->now_ms;
    }
    if (r->sends == r->fail_send) {
        r->failed_at = r->now_ms;
        CHECK_CODE(replystream_engine_push_delivery_failed(engine, a->send_id, r->retry_after_ms,
                                                           false, r->now_ms),
                   REPLYSTREAM_OK);
        return;
    }
    chat *c = &r->chat;
    char ref[16] = "";
    switch (a->op) {
    case REPLYSTREAM_OP_CREATE:
        CHECK(c->count < 8);
        snprintf(c->ids[c->count], sizeof c->ids[c->count], "m%u", ++c->next_id);
        set_text(c->texts[c->count], a->text);
        snprintf(ref, sizeof ref, "%s", c->ids[c->count]);
        c->count++;
        c->creates++;
        c->draft[0] = '\0'; /* a new message replaces the draft bubble */
        break;
    case REPLYSTREAM_OP_EDIT: {
        CHECK(a->has_message_key && a->has_message_ref);
        int i = find(c, a->message_ref);
        CHECK(i >= 0);
        set_text(c->texts[i], a->text);
        c->edits++;
        break;
    }
    case REPLYSTREAM_OP_DELETE: {
        int i = find(c, a->message_ref);
        if (i >= 0) {
            for (unsigned j = (unsigned)i; j + 1 < c->count; j++) {
                memcpy(c->ids[j], c->ids[j + 1], sizeof c->ids[j]);
                memcpy(c->texts[j], c->texts[j + 1], sizeof c->texts[j]);
            }
            c->count--;
        } else {
            c->draft[0] = '\0';
        }
        c->deletes++;
        break;
    }
    case REPLYSTREAM_OP_DRAFT:
        CHECK(a->has_message_key);
        set_text(c->draft, a->text);
        c->drafts++;
        break;
    default:
        CHECK(!"unknown op");
    }
    if (a->send_kind == REPLYSTREAM_SEND_PREVIEW && a->op != REPLYSTREAM_OP_DELETE) {
        CHECK(r->previews < 64);
        r->preview_times[r->previews++] = r->now_ms;
    }
    if (a->send_kind == REPLYSTREAM_SEND_FINAL) {
        r->finals++;
        r->final_edits += a->op == REPLYSTREAM_OP_EDIT;
    }
    CHECK_CODE(replystream_engine_push_delivered(engine, a->send_id, ref[0] ? ref : NULL,
                                                 strlen(ref), r->now_ms),
               REPLYSTREAM_OK);
}

static void drain_chat(replystream_engine *engine, run *r) {
    for (;;) {
        const replystream_action *a = NULL;
        replystream_result res = replystream_engine_poll_action(engine, &a);
        if (res == REPLYSTREAM_DONE) {
            return;
        }
        CHECK_CODE(res, REPLYSTREAM_OK);
        if (a->kind == REPLYSTREAM_ACTION_SEND) {
            deliver(engine, r, a);
        } else if (a->kind == REPLYSTREAM_ACTION_IDLE) {
            r->idle = true;
        }
    }
}

static void turn(uint32_t transport, unsigned fail_send, run *r) {
    replystream_options *opts = new_options();
    CHECK_CODE(replystream_options_set_preview(opts, REPLYSTREAM_PREVIEW_PARTIAL), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_preview_throttle_ms(opts, 250), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_preview_transport(opts, transport), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_preview_transport(opts, 7), REPLYSTREAM_INVALID_CONFIG);
    replystream_engine *engine = new_engine("telegram", opts);
    replystream_options_free(opts);

    memset(r, 0, sizeof *r);
    r->fail_send = fail_send;
    r->retry_after_ms = 1234;
    r->now_ms = 100;
    CHECK_CODE(replystream_engine_push_message_start(engine, r->now_ms), REPLYSTREAM_OK);
    size_t len = strlen(REPLY);
    for (size_t at = 0; at < len; at += 4) {
        size_t n = len - at < 4 ? len - at : 4;
        r->now_ms += 20;
        /* Fire a deadline passed on the way (a throttle window's end, a pause's end). */
        uint64_t deadline = deadline_of(engine);
        if (deadline != REPLYSTREAM_NONE && deadline <= r->now_ms) {
            uint64_t now = r->now_ms;
            r->now_ms = deadline;
            CHECK_CODE(replystream_engine_push_timer(engine, r->now_ms), REPLYSTREAM_OK);
            drain_chat(engine, r);
            r->now_ms = now;
        }
        CHECK_CODE(replystream_engine_push_text_delta(engine, REPLY + at, n, r->now_ms),
                   REPLYSTREAM_OK);
        drain_chat(engine, r);
    }
    CHECK_CODE(replystream_engine_push_message_end(engine, NULL, 0, r->now_ms), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_finish(engine, r->now_ms), REPLYSTREAM_OK);
    for (int step = 0; step < 1000 && !r->idle; step++) {
        drain_chat(engine, r);
        if (r->idle || !fire_next_deadline(engine, &r->now_ms)) {
            break;
        }
    }
    CHECK(r->idle);
    CHECK_CODE(replystream_engine_stats(engine, &r->stats, sizeof r->stats), REPLYSTREAM_OK);
    replystream_engine_free(engine);
}

/* Fires every deadline up to `until`, draining after each. */
static void advance(replystream_engine *engine, run *r, uint64_t until) {
    while (deadline_of(engine) <= until && fire_next_deadline(engine, &r->now_ms)) {
        drain_chat(engine, r);
    }
    r->now_ms = until;
}

/* Whitespace at the end of the reasoning does not change what the preview shows (its quote
 * is trimmed): the update that would carry it is skipped (counted), and the next real text
 * is sent. */
static void an_update_showing_nothing_new_is_skipped(void) {
    replystream_options *opts = new_options();
    CHECK_CODE(replystream_options_set_preview(opts, REPLYSTREAM_PREVIEW_PARTIAL), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_preview_throttle_ms(opts, 250), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_preview_min_initial_units(opts, 1), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_reasoning(opts, REPLYSTREAM_REASONING_STREAM), REPLYSTREAM_OK);
    replystream_engine *engine = new_engine("telegram", opts);
    replystream_options_free(opts);
    static run r;
    memset(&r, 0, sizeof r);
    replystream_stats stats;
    CHECK_CODE(replystream_engine_push_message_start(engine, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_thinking_delta(engine, "Measure the river first.", 24, 0),
               REPLYSTREAM_OK);
    drain_chat(engine, &r);
    advance(engine, &r, 1000);
    CHECK_CODE(replystream_engine_stats(engine, &stats, sizeof stats), REPLYSTREAM_OK);
    CHECK(stats.preview_updates == 1 && stats.preview_skips == 0);
    CHECK(r.chat.creates == 1);

    CHECK_CODE(replystream_engine_push_thinking_delta(engine, "  \n", 3, r.now_ms), REPLYSTREAM_OK);
    drain_chat(engine, &r);
    advance(engine, &r, 2000);
    CHECK_CODE(replystream_engine_stats(engine, &stats, sizeof stats), REPLYSTREAM_OK);
    CHECK(stats.preview_updates == 1 && stats.preview_skips == 1);

    CHECK_CODE(replystream_engine_push_text_delta(engine, "Then we cross.", 14, r.now_ms),
               REPLYSTREAM_OK);
    drain_chat(engine, &r);
    advance(engine, &r, 3000);
    CHECK_CODE(replystream_engine_stats(engine, &stats, sizeof stats), REPLYSTREAM_OK);
    CHECK(stats.preview_updates == 2 && stats.preview_skips == 1);
    CHECK(r.chat.creates == 1 && r.chat.edits == 1);
    CHECK(r.previews == 2);
    replystream_engine_free(engine);
}

int main(void) {
    static run r;

    /* Edit transport, no failures: one message, edited in place into the final. */
    turn(REPLYSTREAM_PREVIEW_TRANSPORT_EDIT, 0, &r);
    CHECK(r.chat.count == 1);
    CHECK(strcmp(r.chat.texts[0], REPLY) == 0);
    CHECK(strstr(r.chat.texts[0], CURSOR) == NULL);
    CHECK(r.chat.creates == 1 && r.chat.edits >= 3 && r.final_edits == 1 && r.finals == 1);
    for (unsigned i = 1; i < r.previews; i++) {
        CHECK(r.preview_times[i] - r.preview_times[i - 1] >= 250);
    }
    unsigned edits = r.chat.edits;
    /* Every preview operation the chat saw is counted (the final's edit is a FINAL). */
    CHECK(r.stats.preview_updates == r.previews);
    CHECK(r.stats.sends == r.previews + r.finals);

    /* A 429 on the second send: nothing leaves before exactly its retry_after. */
    turn(REPLYSTREAM_PREVIEW_TRANSPORT_EDIT, 2, &r);
    CHECK(r.chat.count == 1 && strcmp(r.chat.texts[0], REPLY) == 0);
    CHECK(r.failed_at != 0 && r.first_after_failure >= r.failed_at + 1234);

    /* Draft transport: draft updates, then the final as a new message. */
    turn(REPLYSTREAM_PREVIEW_TRANSPORT_DRAFT, 0, &r);
    CHECK(r.chat.count == 1 && strcmp(r.chat.texts[0], REPLY) == 0);
    CHECK(r.chat.drafts >= 3 && r.chat.edits == 0 && r.final_edits == 0);
    CHECK(r.chat.draft[0] == '\0');
    CHECK(r.stats.preview_updates == r.previews && r.previews == r.chat.drafts);

    an_update_showing_nothing_new_is_skipped();

    printf("preview: %u edits, then %u draft updates, each turn ending with the reply\n", edits,
           r.chat.drafts);
    return 0;
}
