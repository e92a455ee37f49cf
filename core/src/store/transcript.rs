//! The transcript's torn last line: a crash or a full disk can cut the last append
//! short, and the next append would then be glued onto the fragment and lost with
//! it. Before appending, the tail is checked and a cut line is moved, byte for byte,
//! into `transcript.jsonl.torn`, so the file ends at its last whole entry again.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Where cut-off tails are kept, appended one after another.
pub fn torn_path(transcript: &Path) -> PathBuf {
    let mut name = transcript.as_os_str().to_owned();
    name.push(".torn");
    PathBuf::from(name)
}

/// Make `path` end with a whole entry and a newline. Returns how many bytes were
/// moved into the `.torn` file (0 when the tail was sound). A last entry that is
/// whole but lacks only its newline gets the newline instead of being moved.
/// Reads only the last line.
pub fn repair_tail(path: &Path) -> std::io::Result<u64> {
    let mut file = match OpenOptions::new().read(true).write(true).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(0);
    }
    let ends_with_newline = read_at(&mut file, len - 1, 1)? == b"\n";
    let body_end = if ends_with_newline { len - 1 } else { len };
    let start = last_line_start(&mut file, body_end)?;
    let line = read_at(&mut file, start, (body_end - start) as usize)?;
    if is_entry(&line) {
        if !ends_with_newline {
            file.seek(SeekFrom::End(0))?;
            file.write_all(b"\n")?;
            file.sync_data()?;
        }
        return Ok(0);
    }
    let torn = read_at(&mut file, start, (len - start) as usize)?;
    let mut kept = OpenOptions::new()
        .create(true)
        .append(true)
        .open(torn_path(path))?;
    kept.write_all(&torn)?;
    if !torn.ends_with(b"\n") {
        kept.write_all(b"\n")?;
    }
    // The torn bytes are on disk elsewhere before they leave the transcript.
    kept.sync_all()?;
    file.set_len(start)?;
    file.sync_all()?;
    Ok(len - start)
}

/// A line is a whole entry when it is a complete JSON object: a cut line never is,
/// and one written by another version (an item this one does not know) stays.
pub fn is_entry(line: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(line).is_ok_and(|v| v.is_object())
}

/// The offset just after the last newline before `end` (0 when there is none),
/// reading backwards in blocks.
fn last_line_start(file: &mut File, end: u64) -> std::io::Result<u64> {
    const BLOCK: u64 = 64 << 10;
    let mut pos = end;
    while pos > 0 {
        let from = pos.saturating_sub(BLOCK);
        let block = read_at(file, from, (pos - from) as usize)?;
        if let Some(i) = memchr::memrchr(b'\n', &block) {
            return Ok(from + i as u64 + 1);
        }
        pos = from;
    }
    Ok(0)
}

fn read_at(file: &mut File, at: u64, n: usize) -> std::io::Result<Vec<u8>> {
    file.seek(SeekFrom::Start(at))?;
    let mut buf = vec![0u8; n];
    file.read_exact(&mut buf)?;
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "{\"at\":\"1\",\"item\":{\"type\":\"user\",\"text\":\"a\"}}\n";
    const B: &str = "{\"at\":\"2\",\"item\":{\"type\":\"user\",\"text\":\"b\"}}\n";

    fn setup(content: &[u8]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("transcript.jsonl");
        std::fs::write(&path, content).unwrap();
        (dir, path)
    }

    #[test]
    fn a_cut_line_is_set_aside_and_the_file_ends_at_the_last_entry() {
        let torn = b"{\"at\":\"3\",\"item\":{\"ty";
        let (_d, path) = setup(&[A.as_bytes(), B.as_bytes(), torn].concat());
        assert_eq!(repair_tail(&path).unwrap(), torn.len() as u64);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), format!("{A}{B}"));
        let kept = std::fs::read(torn_path(&path)).unwrap();
        assert_eq!(kept, [&torn[..], b"\n"].concat());
        // Sound now: nothing more moves, and a second tear is appended to the first.
        assert_eq!(repair_tail(&path).unwrap(), 0);
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"\0\0\0\0")
            .unwrap();
        assert_eq!(repair_tail(&path).unwrap(), 4);
        let kept = std::fs::read(torn_path(&path)).unwrap();
        assert_eq!(kept, [&torn[..], b"\n\0\0\0\0\n"].concat());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), format!("{A}{B}"));
    }

    #[test]
    fn a_whole_entry_without_its_newline_is_completed_not_moved() {
        let (_d, path) = setup(format!("{A}{}", B.trim_end()).as_bytes());
        assert_eq!(repair_tail(&path).unwrap(), 0);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), format!("{A}{B}"));
        assert!(!torn_path(&path).exists());
    }

    #[test]
    fn a_newline_ended_garbage_line_and_a_file_of_one_cut_line_are_set_aside() {
        let (_d, path) = setup(format!("{A}not json at all\n").as_bytes());
        assert_eq!(repair_tail(&path).unwrap(), 16);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), A);
        let (_d, path) = setup(b"{\"at\": \"cut");
        assert_eq!(repair_tail(&path).unwrap(), 11);
        assert_eq!(std::fs::read(&path).unwrap(), b"");
    }

    #[test]
    fn a_long_last_line_is_found_across_blocks_and_sound_files_are_untouched() {
        let long = format!(
            "{{\"at\":\"3\",\"item\":{{\"type\":\"user\",\"text\":\"{}\"}}}}\n",
            "x".repeat(300_000)
        );
        let content = format!("{A}{long}");
        let (_d, path) = setup(content.as_bytes());
        assert_eq!(repair_tail(&path).unwrap(), 0);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), content);
        let cut = &content.as_bytes()[..A.len() + 200_000];
        std::fs::write(&path, cut).unwrap();
        assert_eq!(repair_tail(&path).unwrap(), 200_000);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), A);
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(repair_tail(&dir.path().join("none.jsonl")).unwrap(), 0);
    }
}
