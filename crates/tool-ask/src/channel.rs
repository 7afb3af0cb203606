//! The channel port: an embedding UI receives each card on a channel and
//! answers it on a oneshot. This is the port a harness with its own UI uses.

use crate::{Answer, Card, QuestionPort};
use async_trait::async_trait;
use tokio::sync::{mpsc, oneshot};

/// A card waiting for the UI's answer.
#[derive(Debug)]
pub struct PendingCard {
    pub card: Card,
    reply: oneshot::Sender<Answer>,
}

impl PendingCard {
    /// Answer the card. Returns the answer back when the asker has already
    /// given up (the card expired or the call was cancelled).
    pub fn answer(self, answer: Answer) -> Result<(), Answer> {
        self.reply.send(answer)
    }

    /// Whether the asker stopped waiting (expired, cancelled): the UI should
    /// close the card.
    pub fn is_abandoned(&self) -> bool {
        self.reply.is_closed()
    }

    /// Resolves when the asker stops waiting.
    pub async fn abandoned(&mut self) {
        self.reply.closed().await;
    }
}

/// The UI's end: cards arrive here in the order they are asked.
pub type CardReceiver = mpsc::UnboundedReceiver<PendingCard>;

/// A [`QuestionPort`] over a channel. When the [`CardReceiver`] is dropped the
/// port has no human attached, and every call fails at once.
#[derive(Debug, Clone)]
pub struct ChannelPort {
    cards: mpsc::UnboundedSender<PendingCard>,
}

impl ChannelPort {
    /// The port and the receiver the UI reads cards from.
    pub fn new() -> (ChannelPort, CardReceiver) {
        let (cards, rx) = mpsc::unbounded_channel();
        (ChannelPort { cards }, rx)
    }
}

#[async_trait]
impl QuestionPort for ChannelPort {
    async fn ask(&self, card: &Card) -> Answer {
        let (reply, answer) = oneshot::channel();
        if self
            .cards
            .send(PendingCard {
                card: card.clone(),
                reply,
            })
            .is_err()
        {
            return Answer::no_human("the UI that answers cards is gone");
        }
        answer
            .await
            .unwrap_or_else(|_| Answer::no_human("the UI closed the card without an answer"))
    }

    fn human_attached(&self) -> bool {
        !self.cards.is_closed()
    }

    fn describe(&self) -> String {
        "the harness UI".into()
    }
}
