/* The media policy through the C ABI: a model-written path is media only inside a root
 * added with replystream_options_add_media_root; http:// can be refused; refusals are
 * counted in replystream_stats.media_refused; a bad root is refused at engine creation. */
#include "harness.h"

/* What a turn sent: the non-empty texts, each followed by '\n'; the media joined by '|';
 * the count of refused references. */
typedef struct {
    drive_log log;
    char text[1024];
    size_t text_len;
    char media[1024];
    size_t media_len;
    uint64_t refused;
} media_run;

/* Runs `reply` (in 5-byte deltas) through an engine made with `opts` (freed here). */
static void run(replystream_options *opts, const char *reply, media_run *out) {
    replystream_engine *engine = new_engine("generic", opts);
    replystream_options_free(opts);
    memset(out, 0, sizeof *out);
    size_t len = strlen(reply);
    for (size_t at = 0; at < len; at += 5) {
        size_t n = len - at < 5 ? len - at : 5;
        CHECK_CODE(replystream_engine_push_text_delta(engine, reply + at, n, 0), REPLYSTREAM_OK);
    }
    CHECK_CODE(replystream_engine_push_finish(engine, 0), REPLYSTREAM_OK);
    for (int step = 0; step < 1000 && !replystream_engine_is_done(engine); step++) {
        const replystream_action *a = NULL;
        while (replystream_engine_poll_action(engine, &a) == REPLYSTREAM_OK) {
            if (a->kind != REPLYSTREAM_ACTION_SEND) {
                continue;
            }
            log_send(&out->log, engine, a);
            if (a->text.len > 0) {
                CHECK(out->text_len + a->text.len + 2 < sizeof out->text);
                memcpy(out->text + out->text_len, a->text.ptr, a->text.len);
                out->text_len += a->text.len;
                out->text[out->text_len++] = '\n';
                out->text[out->text_len] = '\0';
            }
            for (size_t i = 0; i < a->media_count; i++) {
                CHECK(out->media_len + a->media[i].len + 2 < sizeof out->media);
                if (out->media_len > 0) {
                    out->media[out->media_len++] = '|';
                }
                memcpy(out->media + out->media_len, a->media[i].ptr, a->media[i].len);
                out->media_len += a->media[i].len;
                out->media[out->media_len] = '\0';
            }
            CHECK_CODE(replystream_engine_push_delivered(engine, a->send_id, NULL, 0, 0),
                       REPLYSTREAM_OK);
        }
        fire_next_deadline(engine, &out->log.now_ms);
    }
    CHECK(replystream_engine_is_done(engine));
    replystream_stats stats;
    memset(&stats, 0, sizeof stats);
    CHECK_CODE(replystream_engine_stats(engine, &stats, sizeof stats), REPLYSTREAM_OK);
    out->refused = stats.media_refused;
    replystream_engine_free(engine);
}

static const char REPLY[] =
    "Here:\nMEDIA: ~/.ssh/id_rsa\nMEDIA: /etc/shadow\n"
    "MEDIA: '/srv/media/../../etc/passwd' /srv/media/chart.png\nDone.";

static void no_local_path_without_a_root(void) {
    media_run r;
    run(new_options(), REPLY, &r);
    CHECK(strcmp(r.media, "") == 0);
    CHECK(strcmp(r.text, "Here:\nDone.\n") == 0);
    CHECK(r.refused == 4);
}

static void paths_inside_a_root(void) {
    replystream_options *opts = new_options();
    CHECK_CODE(replystream_options_add_media_root(opts, "/srv/media", 10), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_add_media_root(opts, "/srv/other/", 11), REPLYSTREAM_OK);
    media_run r;
    run(opts, REPLY, &r);
    CHECK(strcmp(r.media, "/srv/media/chart.png") == 0);
    CHECK(strcmp(r.text, "Here:\nDone.\n") == 0);
    CHECK(r.refused == 3);

    opts = new_options();
    CHECK_CODE(replystream_options_add_media_root(opts, "/srv/other", 10), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_add_media_root(opts, "/srv/media", 10), REPLYSTREAM_OK);
    run(opts, "MEDIA: file:///srv/media/a%20b.png file:///etc/passwd /srv/other/x/../y.jpg\nok",
        &r);
    CHECK(strcmp(r.media, "/srv/media/a b.png|/srv/other/y.jpg") == 0);
    CHECK(strcmp(r.text, "ok\n") == 0);
    CHECK(r.refused == 1);
}

static void http_can_be_refused(void) {
    const char *reply = "See:\nMEDIA: http://example.com/a.png\nok";
    media_run r;
    run(new_options(), reply, &r);
    CHECK(strcmp(r.media, "http://example.com/a.png") == 0);
    CHECK(r.refused == 0);
    replystream_options *opts = new_options();
    CHECK_CODE(replystream_options_set_media_allow_http(opts, false), REPLYSTREAM_OK);
    run(opts, reply, &r);
    CHECK(strcmp(r.media, "") == 0);
    CHECK(strcmp(r.text, "See:\nMEDIA: http://example.com/a.png\nok\n") == 0);
    CHECK(r.refused == 1);
    /* A private host stays text whatever the setting. */
    run(new_options(), "MEDIA: https://169.254.169.254/latest\n", &r);
    CHECK(strcmp(r.media, "") == 0);
    CHECK(strcmp(r.text, "MEDIA: https://169.254.169.254/latest\n") == 0);
    CHECK(r.refused == 1);
}

static void bad_roots_are_refused(void) {
    const char *bad[] = {"media", "~/media", "/srv/../etc", "/", ""};
    const char *why[] = {"absolute", "absolute", "..", "top of the file system", "empty"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        replystream_options *opts = new_options();
        CHECK_CODE(replystream_options_add_media_root(opts, "/srv/ok", 7), REPLYSTREAM_OK);
        CHECK_CODE(replystream_options_add_media_root(opts, bad[i], strlen(bad[i])),
                   REPLYSTREAM_OK); /* checked on use */
        replystream_engine *engine = NULL;
        CHECK_CODE(replystream_engine_new("generic", 7, opts, 0, &engine),
                   REPLYSTREAM_INVALID_CONFIG);
        CHECK(engine == NULL);
        check_new_error("media.roots[1]");
        check_new_error(why[i]);
        replystream_options_free(opts);
    }
    replystream_options *opts = new_options();
    CHECK_CODE(replystream_options_add_media_root(opts, NULL, 0), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_options_add_media_root(opts, "/srv/\xff", 6), REPLYSTREAM_INVALID_UTF8);
    CHECK_CODE(replystream_options_add_media_root(NULL, "/srv", 4), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_options_set_media_allow_http(NULL, true), REPLYSTREAM_NULL_POINTER);
    /* Refused calls stored nothing: the options still make an engine. */
    replystream_engine_free(new_engine("generic", opts));
    replystream_options_free(opts);
}

int main(void) {
    no_local_path_without_a_root();
    paths_inside_a_root();
    http_can_be_refused();
    bad_roots_are_refused();
    printf("media: ok\n");
    return 0;
}
