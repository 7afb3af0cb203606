//! Changes the servers compute: `lsp_rename` ([`rename`], with
//! [`identifier`], the new name's check, and [`macro_paths`], paths in
//! macro bodies renamed with their item), moves of files and folders
//! ([`file_move`]), `lsp_code_action` ([`code_action`]); each applied
//! all-or-nothing or staged ([`staged_edit`]), and [`preview`], the
//! diagnostics delta a staged change would bring.

pub(crate) mod code_action;
pub(crate) mod file_move;
pub(crate) mod identifier;
pub(crate) mod macro_paths;
pub(crate) mod preview;
pub(crate) mod rename;
pub(crate) mod staged_edit;
