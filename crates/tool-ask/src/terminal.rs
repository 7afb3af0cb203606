//! The terminal port: the binary draws each card on its controlling terminal
//! (`/dev/tty`, not stdout, so a command's output stays clean) and reads the
//! reply typed there. Without a terminal it has no human attached.

use crate::render::{hint, render_card};
use crate::{Answer, Card, QuestionAnswer, QuestionPort};
use async_trait::async_trait;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// A [`QuestionPort`] on the controlling terminal.
#[derive(Debug)]
pub struct TerminalPort {
    /// Whether this process was started by a person at a terminal (stdin is
    /// a TTY). When false the port has no human attached even if a terminal
    /// can be opened: a pipeline or a service must not stop to ask.
    interactive: bool,
    tty: PathBuf,
    /// One card at a time: two prompts on one terminal would interleave.
    turn: tokio::sync::Mutex<()>,
}

impl TerminalPort {
    pub fn new(interactive: bool) -> Self {
        TerminalPort {
            interactive,
            tty: PathBuf::from("/dev/tty"),
            turn: tokio::sync::Mutex::new(()),
        }
    }

    fn open(&self) -> io::Result<File> {
        OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(&self.tty)
    }
}

/// Writes a line on the terminal if the card is dropped before it settled
/// (it expired or the call was withdrawn), so the person knows their next
/// keystrokes are not an answer.
struct Unsettled<'a> {
    tty: &'a File,
    number: u64,
    settled: bool,
}

impl Drop for Unsettled<'_> {
    fn drop(&mut self) {
        if !self.settled {
            let mut tty = self.tty;
            let _ = write!(
                tty,
                "\n(card #{} expired or was withdrawn; no answer taken)\n",
                self.number
            );
        }
    }
}

#[async_trait]
impl QuestionPort for TerminalPort {
    async fn ask(&self, card: &Card) -> Answer {
        if !self.interactive {
            return Answer::no_human("not started from a terminal");
        }
        let _turn = self.turn.lock().await;
        let file = match self.open() {
            Ok(f) => f,
            Err(e) => return Answer::no_human(format!("cannot open the terminal: {e}")),
        };
        // SAFETY: the File owns its descriptor and the AsyncFd owns the
        // File, so the descriptor stays open and the same until it drops.
        let tty = match unsafe { AsyncFd::register_with_interest(file, Interest::READABLE) } {
            Ok(t) => t,
            Err(e) => return Answer::no_human(format!("cannot watch the terminal: {e}")),
        };
        let mut guard = Unsettled {
            tty: tty.get_ref(),
            number: card.number,
            settled: false,
        };
        let mut out = tty.get_ref();
        if write!(out, "\n{}", render_card(card)).is_err() {
            guard.settled = true;
            return Answer::no_human("cannot write to the terminal");
        }
        // A secret is typed with the echo off; the echo comes back on drop.
        let _masked = card.secret.then(|| NoEcho::new(tty.get_ref()));
        let mut pending = Vec::new();
        let answer = if card.questions.is_empty() {
            ask_one(&tty, &mut pending, card, "> ").await
        } else {
            let n = card.questions.len();
            let mut answers = Vec::new();
            let mut ended = None;
            for (k, q) in card.questions.iter().enumerate() {
                let view = Card {
                    question: q.question.clone(),
                    options: q.options.clone(),
                    allow_free_text: true,
                    multi_select: q.multi,
                    questions: Vec::new(),
                    ..card.clone()
                };
                match ask_one(
                    &tty,
                    &mut pending,
                    &view,
                    &format!("[{}/{n}] {}> ", k + 1, q.header),
                )
                .await
                {
                    Answer::Answered { choices, text } => answers.push(QuestionAnswer {
                        id: q.id.clone(),
                        choices,
                        text,
                    }),
                    other => {
                        ended = Some(other);
                        break;
                    }
                }
            }
            ended.unwrap_or(Answer::AnsweredAll {
                answers,
                note: None,
            })
        };
        if card.secret {
            let _ = writeln!(out);
        }
        guard.settled = true;
        if !matches!(answer, Answer::NoHuman { .. }) {
            let _ = writeln!(out, "(card #{} {})", card.number, settled_word(&answer));
        }
        answer
    }

    fn human_attached(&self) -> bool {
        self.interactive && self.open().is_ok()
    }

    fn describe(&self) -> String {
        "the terminal port".into()
    }
}

/// Prompt with `prompt` until a line parses as an answer to `card`.
async fn ask_one(tty: &AsyncFd<File>, pending: &mut Vec<u8>, card: &Card, prompt: &str) -> Answer {
    let mut out = tty.get_ref();
    if write!(out, "{prompt}").is_err() {
        return Answer::no_human("cannot write to the terminal");
    }
    loop {
        let line = match read_line(tty, pending).await {
            Ok(Some(l)) => l,
            Ok(None) => return Answer::no_human("the terminal closed (end of input)"),
            Err(e) => return Answer::no_human(format!("reading the terminal failed: {e}")),
        };
        match parse_reply(card, &line) {
            Ok(answer) => return answer,
            Err(again) => {
                let _ = write!(
                    out,
                    "{}{again}\n{prompt}",
                    if card.secret { "\n" } else { "" }
                );
            }
        }
    }
}

/// The terminal's echo turned off until this drops.
struct NoEcho<'a> {
    tty: &'a File,
    saved: Option<libc::termios>,
}

impl<'a> NoEcho<'a> {
    fn new(tty: &'a File) -> Self {
        use std::os::fd::AsRawFd;
        let fd = tty.as_raw_fd();
        // SAFETY: tcgetattr/tcsetattr on a descriptor the File owns, with a
        // termios we own.
        let saved = unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(fd, &raw mut t) != 0 {
                None
            } else {
                let mut quiet = t;
                quiet.c_lflag &= !(libc::ECHO | libc::ECHONL);
                libc::tcsetattr(fd, libc::TCSANOW, &raw const quiet);
                Some(t)
            }
        };
        NoEcho { tty, saved }
    }
}

impl Drop for NoEcho<'_> {
    fn drop(&mut self) {
        use std::os::fd::AsRawFd;
        if let Some(t) = &self.saved {
            // SAFETY: as above; restores what tcgetattr returned.
            unsafe { libc::tcsetattr(self.tty.as_raw_fd(), libc::TCSANOW, t) };
        }
    }
}

fn settled_word(answer: &Answer) -> &'static str {
    match answer {
        Answer::Answered { .. } | Answer::AnsweredAll { .. } => "answered",
        Answer::Skipped => "skipped",
        Answer::Discuss => "left to discuss",
        _ => "closed",
    }
}

/// The next line typed, without its newline; `None` at end of input.
async fn read_line(tty: &AsyncFd<File>, pending: &mut Vec<u8>) -> io::Result<Option<String>> {
    loop {
        if let Some(i) = pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = pending.drain(..=i).collect();
            let text = String::from_utf8_lossy(&line[..i]);
            return Ok(Some(text.trim_end_matches('\r').to_string()));
        }
        let mut guard = tty.readable().await?;
        let mut buf = [0u8; 1024];
        match guard.try_io(|f| f.get_ref().read(&mut buf)) {
            Ok(Ok(0)) => return Ok(None),
            Ok(Ok(n)) => pending.extend_from_slice(&buf[..n]),
            Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
            Ok(Err(e)) => return Err(e),
            Err(_would_block) => {}
        }
    }
}

/// Turn one typed line into an answer, or say what to type instead.
pub(crate) fn parse_reply(card: &Card, line: &str) -> Result<Answer, String> {
    let line = line.trim();
    if line.is_empty() {
        return Err(format!("an empty answer is not an answer; {}", hint(card)));
    }
    if line.eq_ignore_ascii_case("s") {
        return Ok(Answer::Skipped);
    }
    if line.eq_ignore_ascii_case("d") && matches!(card.kind, crate::CardKind::Question) {
        return Ok(Answer::Discuss);
    }
    let n = card.options.len();
    if n > 0 {
        let tokens: Vec<&str> = line
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|t| !t.is_empty())
            .collect();
        let numbers: Option<Vec<usize>> = tokens.iter().map(|t| t.parse().ok()).collect();
        if let Some(numbers) = numbers {
            let mut labels = Vec::new();
            for k in numbers {
                match card.option_number(k) {
                    Some(o) if !labels.contains(&o.label) => labels.push(o.label.clone()),
                    Some(_) => {}
                    None => return Err(format!("there is no option {k}; {}", hint(card))),
                }
            }
            if labels.len() > 1 && !card.multi_select {
                return Err(format!("choose only one; {}", hint(card)));
            }
            return Ok(Answer::choose(labels));
        }
        if let Some(o) = card
            .options
            .iter()
            .find(|o| o.label.eq_ignore_ascii_case(line))
        {
            return Ok(Answer::choose([o.label.clone()]));
        }
    }
    if card.allow_free_text {
        return Ok(Answer::typed(line));
    }
    Err(format!("that is not one of the options; {}", hint(card)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CardKind, CardOption, TargetSpace};
    use std::time::Duration;

    fn card(multi: bool, free: bool) -> Card {
        Card {
            number: 1,
            kind: CardKind::Question,
            target: TargetSpace::terminal(),
            question: "Which?".into(),
            context: None,
            options: vec![
                CardOption::new("red"),
                CardOption::new("green"),
                CardOption::new("blue"),
            ],
            allow_free_text: free,
            multi_select: multi,
            questions: Vec::new(),
            secret: false,
            expires_in: Duration::from_secs(5),
        }
    }

    #[test]
    fn replies_parse_as_numbers_labels_text_or_skip() {
        let single = card(false, false);
        assert_eq!(parse_reply(&single, "2"), Ok(Answer::choose(["green"])));
        assert_eq!(parse_reply(&single, " Blue "), Ok(Answer::choose(["blue"])));
        assert_eq!(
            parse_reply(&single, "  "),
            Err(
                "an empty answer is not an answer; type a number 1–3; s skips, d discusses instead"
                    .into()
            )
        );
        assert_eq!(parse_reply(&single, "S"), Ok(Answer::Skipped));
        assert_eq!(parse_reply(&single, "d"), Ok(Answer::Discuss));
        assert!(parse_reply(&single, "1,2")
            .unwrap_err()
            .starts_with("choose only one"));
        assert!(parse_reply(&single, "7")
            .unwrap_err()
            .starts_with("there is no option 7"));
        assert!(parse_reply(&single, "purple")
            .unwrap_err()
            .contains("not one of the options"));

        let multi = card(true, true);
        assert_eq!(
            parse_reply(&multi, "3, 1 3"),
            Ok(Answer::choose(["blue", "red"]))
        );
        assert_eq!(
            parse_reply(&multi, "purple please"),
            Ok(Answer::typed("purple please"))
        );
    }
}
