//! ask_user: question ports, target spaces and approval cards.
//!
//! Not built yet: its issue fills this crate in.
