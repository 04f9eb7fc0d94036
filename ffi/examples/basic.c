/* basic.c: stream a short reply through replystream on a fake clock and print the sends,
 * then split a long text with the text core.
 *
 * With the library installed (see the README, "Install and use"):
 *
 *   cc -std=c11 -Wall basic.c $(pkg-config --cflags --libs replystream) -o basic && ./basic
 *
 * The host's job is a loop: push each model event with the current time, then poll actions
 * until REPLYSTREAM_DONE, delivering each SEND and acking it. When nothing is pending, wait
 * until the next deadline and push a timer. Here "delivering" is printing and the clock is a
 * counter, so the run is instant and always the same.
 */
#include <stdio.h>
#include <string.h>

#include <replystream.h>

static uint64_t now_ms = 0;

/* Executes every pending action. Returns 1 once the engine said IDLE. */
static int run_actions(replystream_engine *engine) {
    static const char *kinds[] = {"tool", "block", "final", "preview"};
    int idle = 0;
    const replystream_action *action = NULL;
    while (replystream_engine_poll_action(engine, &action) == REPLYSTREAM_OK) {
        switch (action->kind) {
        case REPLYSTREAM_ACTION_SEND:
            /* text is what to post, in the channel's format: Telegram HTML here, so a real
             * host calls sendMessage with parse_mode=HTML (markdown holds the Markdown). */
            printf("[%6llu ms] send #%llu (%s, %s, %zu bytes): %.*s\n",
                   (unsigned long long)now_ms, (unsigned long long)action->send_id,
                   kinds[action->send_kind], action->format_name.ptr, action->text.len,
                   (int)action->text.len, action->text.ptr);
            /* A real host posts the message here, then reports the platform's id. */
            now_ms += 120;
            replystream_engine_push_delivered(engine, action->send_id, "platform-id", 11, now_ms);
            break;
        case REPLYSTREAM_ACTION_ARM_TIMER:
            /* A real host (re)arms its timer; this one asks next_deadline when idle. */
            break;
        case REPLYSTREAM_ACTION_ABORT:
            printf("[%6llu ms] abort\n", (unsigned long long)now_ms);
            break;
        case REPLYSTREAM_ACTION_IDLE:
            printf("[%6llu ms] idle: the turn is complete\n", (unsigned long long)now_ms);
            idle = 1;
            break;
        default:
            break;
        }
    }
    return idle;
}

static int stream_a_reply(void) {
    replystream_options *opts = NULL;
    replystream_options_new(&opts);
    replystream_options_set_chunk_min(opts, 60); /* small blocks: several messages */
    replystream_options_set_chunk_max(opts, 160);

    replystream_engine *engine = NULL;
    replystream_result r = replystream_engine_new("telegram", 8, opts, 1, &engine);
    replystream_options_free(opts); /* the engine keeps its own copy */
    if (r != REPLYSTREAM_OK) {
        replystream_str why;
        replystream_new_error(&why);
        fprintf(stderr, "replystream_engine_new: %s (%.*s)\n", replystream_result_str(r),
                (int)why.len, why.ptr);
        return 1;
    }

    const char *reply =
        "Here is the plan for tomorrow.\n\n"
        "First, we meet at the station at nine and take the coastal train north. "
        "The ride takes about forty minutes.\n\n"
        "Then we walk along the cliffs to the lighthouse, have lunch in the village, "
        "and come back on the 16:10 train.";

    replystream_engine_push_message_start(engine, now_ms);
    run_actions(engine);
    /* The model's text arrives in small pieces, 30 ms apart. */
    size_t len = strlen(reply);
    for (size_t at = 0; at < len; at += 12) {
        size_t n = len - at < 12 ? len - at : 12;
        now_ms += 30;
        replystream_engine_push_text_delta(engine, reply + at, n, now_ms);
        run_actions(engine);
    }
    replystream_engine_push_message_end(engine, NULL, 0, now_ms);
    run_actions(engine);
    replystream_engine_push_finish(engine, now_ms);

    /* Drive the engine until it is idle, jumping the fake clock to each deadline. */
    while (!run_actions(engine)) {
        uint64_t deadline;
        if (!replystream_engine_next_deadline(engine, &deadline)) {
            break;
        }
        if (deadline > now_ms) {
            now_ms = deadline;
        }
        replystream_engine_push_timer(engine, now_ms);
    }
    replystream_engine_free(engine);
    return 0;
}

static int split_a_text(void) {
    replystream_options *opts = NULL;
    replystream_options_new(&opts);
    replystream_options_set_text_limit(opts, 80);
    const char *text = "A long answer, split for a small limit.\n\n"
                       "```sh\ncargo build --release\ncargo test --workspace\n```\n\n"
                       "Each piece fits 80 characters, and a cut inside the code block closes "
                       "and reopens the fence.";
    replystream_blocks *blocks = NULL;
    replystream_result r = replystream_split("discord", 7, opts, text, strlen(text), &blocks);
    replystream_options_free(opts);
    if (r != REPLYSTREAM_OK) {
        fprintf(stderr, "replystream_split: %s\n", replystream_result_str(r));
        return 1;
    }
    size_t n = replystream_blocks_count(blocks);
    for (size_t i = 0; i < n; i++) {
        const replystream_block *b = replystream_blocks_get(blocks, i);
        printf("piece %zu (bytes %zu..%zu):\n%.*s\n", i + 1, b->source_start, b->source_end,
               (int)b->text.len, b->text.ptr);
    }
    replystream_blocks_free(blocks);
    return 0;
}

int main(void) {
    printf("replystream %s\n", replystream_version());
    return stream_a_reply() || split_a_text();
}
