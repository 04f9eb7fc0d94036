//! The engine under tokio, without the thread driver: one task owns the engine and waits in
//! `tokio::select!` on the model's stream, on the chat API's acks, and on
//! `sleep_until(poll_timeout)`. The engine never blocks and never reads a clock, so this is
//! all a host on any executor needs.
//!
//! A fake model task streams a reply a few characters at a time through an mpsc channel; a
//! fake chat API answers each message after 40 ms and rate-limits the second one (a 429 with
//! retry-after 300 ms). The program prints each message as it is sent and checks, at the
//! end, that the chat got the whole reply, in order, exactly once.
//!
//! Run: `cargo run --example tokio` (tokio is a dev-dependency only; the library does not
//! depend on it).

use std::time::Duration;

use replystream::{Action, ChannelProfile, Config, Engine, Input, SendRequest, Time};
use tokio::sync::mpsc;
use tokio::time::{Instant, sleep, sleep_until};

/// What the model task sends: text deltas, then the end of the turn.
enum ModelEvent {
    Text(String),
    Done,
}

/// What the chat API answers for one send.
enum ChatAck {
    Delivered {
        send: SendRequest,
    },
    RateLimited {
        send: SendRequest,
        retry_after_ms: u64,
    },
}

const REPLY: &str = "Here is a plan for the migration.\n\n\
1. Freeze writes to the old table for a minute.\n\
2. Copy the rows in batches of ten thousand, checking each batch.\n\
3. Switch the readers, then the writers, to the new table.\n\n\
```sql\nINSERT INTO orders_v2 SELECT * FROM orders WHERE id BETWEEN $1 AND $2;\n```\n\n\
If a batch fails, the copy resumes from the last checked id, so nothing is copied twice.";

/// The fake model: streams `REPLY` in 6-character deltas, one every 5 ms.
async fn model(tx: mpsc::Sender<ModelEvent>) {
    let chars: Vec<char> = REPLY.chars().collect();
    for piece in chars.chunks(6) {
        sleep(Duration::from_millis(5)).await;
        let delta: String = piece.iter().collect();
        if tx.send(ModelEvent::Text(delta)).await.is_err() {
            return;
        }
    }
    let _ = tx.send(ModelEvent::Done).await;
}

/// The fake chat API: answers after 40 ms; the second call is rate-limited.
fn chat_api(send: SendRequest, call: u32, acks: mpsc::UnboundedSender<ChatAck>) {
    tokio::spawn(async move {
        sleep(Duration::from_millis(40)).await;
        let ack = if call == 2 {
            ChatAck::RateLimited {
                send,
                retry_after_ms: 300,
            }
        } else {
            ChatAck::Delivered { send }
        };
        let _ = acks.send(ack);
    });
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let start = Instant::now();
    // The engine's clock: milliseconds since the start, from tokio's monotonic clock.
    let now = move || Time::from_millis(start.elapsed().as_millis() as u64);

    let mut config = Config::for_channel(&ChannelProfile::by_name("telegram").expect("known"));
    config.chunk_min = 60;
    config.chunk_max = 200;
    config.coalesce_idle_ms = 100;
    let mut engine = Engine::new(config, 7).expect("a valid configuration");

    let (model_tx, mut model_rx) = mpsc::channel(64);
    tokio::spawn(model(model_tx));
    let (ack_tx, mut ack_rx) = mpsc::unbounded_channel();

    let mut delivered: Vec<String> = Vec::new();
    let mut calls = 0;
    let mut model_open = true;
    let mut idle = false;
    while !idle {
        // Sleep until the engine's next deadline, or forever if it has none.
        let deadline = engine.poll_timeout();
        let wake = start + Duration::from_millis(deadline.map_or(0, |t| t.as_millis()));
        let input_result = tokio::select! {
            event = model_rx.recv(), if model_open => match event {
                Some(ModelEvent::Text(delta)) => engine.push(Input::TextDelta(&delta), now()).map(drop),
                Some(ModelEvent::Done) | None => {
                    model_open = false;
                    engine.push(Input::Finish, now()).map(drop)
                }
            },
            Some(ack) = ack_rx.recv() => match ack {
                ChatAck::Delivered { send } => {
                    delivered.push(send.payload.text.clone());
                    engine.push(Input::Delivered { send_id: send.send_id, message_ref: None }, now()).map(drop)
                }
                ChatAck::RateLimited { send, retry_after_ms } => {
                    println!("[{:>5} ms] 429: retry #{} after {retry_after_ms} ms", now().as_millis(), send.send_id.0);
                    engine.push(Input::DeliveryFailed {
                        send_id: send.send_id,
                        retry_after_ms: Some(retry_after_ms),
                        permanent: false,
                    }, now()).map(drop)
                }
            },
            () = sleep_until(wake), if deadline.is_some() => engine.push(Input::Timer, now()).map(drop),
        };
        input_result.expect("the engine accepts every input of this host");

        // Execute what the input caused, in order.
        while let Some(action) = engine.poll_action() {
            match action {
                Action::Send(send) => {
                    calls += 1;
                    let first_line = send.payload.text.lines().next().unwrap_or("");
                    println!(
                        "[{:>5} ms] send #{} {:<5} {:>3} chars  {first_line:?}",
                        now().as_millis(),
                        send.send_id.0,
                        send.kind.name(),
                        send.payload.text.chars().count()
                    );
                    chat_api(send, calls, ack_tx.clone());
                }
                // `poll_timeout()` at the top of the loop is the deadline to sleep until.
                Action::ArmTimer { .. } => {}
                Action::Abort { reason } => println!("abort: {}", reason.name()),
                Action::Idle => idle = true,
                _ => {}
            }
        }
    }

    let outcome = engine.outcome().expect("the turn is over");
    println!(
        "[{:>5} ms] idle: {} messages, all delivered: {}",
        now().as_millis(),
        delivered.len(),
        outcome.all_delivered()
    );
    assert!(outcome.all_delivered(), "{outcome:?}");
    // In order, exactly once: the messages joined by the separators they were cut at give
    // back the reply (no message starts or ends with whitespace; each cut here is at a
    // paragraph or line break).
    let rebuilt = delivered.join("\n");
    assert_eq!(
        rebuilt.replace("\n\n", "\n"),
        REPLY.replace("\n\n", "\n"),
        "the chat got the reply, in order, once"
    );
}
