//! Writing to the terminal without panicking: `eprintln!` panics when stderr cannot be written
//! (`2>/dev/full`, a closed descriptor, a full disk behind `2>>train.log`), which turned every
//! error into exit 101. Messages go through [`eline`], which drops what cannot be written, and
//! results go through [`Stdout`], which treats a closed pipe (`gait eval | head -1`) as a reader
//! that has seen enough: the command goes on and finishes its outputs.

use std::io::{self, Write};

/// One line on stderr; a failure to write it is ignored (there is nowhere left to report it).
pub fn eline(line: impl std::fmt::Display) {
    let _ = writeln!(io::stderr(), "{line}");
}

/// Standard output for reports: after the reader closes the pipe, writes are dropped instead
/// of failing the command. Any other write error (a full disk) is returned.
#[derive(Debug, Default)]
pub struct Stdout {
    closed: bool,
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        match io::stdout().write(buf) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(buf.len())
            }
            other => other,
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        match io::stdout().flush() {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            other => other,
        }
    }
}
