//! Bridges between blocking `std::io` code (the `tar` crate) and async byte streams,
//! through bounded channels so memory stays bounded whatever the file sizes.

use std::io::{Read, Write};

use bytes::Bytes;
use futures_util::Stream;
use tokio::sync::mpsc;

const CHUNK: usize = 64 << 10;

/// A blocking writer whose bytes come out of an async stream.
pub struct ChannelWriter {
    buf: Vec<u8>,
    tx: mpsc::Sender<std::io::Result<Bytes>>,
}

impl ChannelWriter {
    /// A writer and the stream that yields what it writes; `depth` chunks of 64 KiB
    /// may be in flight.
    pub fn pair(
        depth: usize,
    ) -> (
        ChannelWriter,
        impl Stream<Item = std::io::Result<Bytes>> + Send + 'static,
    ) {
        let (tx, rx) = mpsc::channel(depth);
        let stream = futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|item| (item, rx))
        });
        (
            ChannelWriter {
                buf: Vec::with_capacity(CHUNK),
                tx,
            },
            stream,
        )
    }

    /// A handle that ends the stream with an error.
    pub fn failer(&self) -> impl FnOnce(std::io::Error) + Send + 'static {
        let tx = self.tx.clone();
        move |e| {
            let _ = tx.blocking_send(Err(e));
        }
    }

    fn send(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = Bytes::from(std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK)));
        self.tx
            .blocking_send(Ok(chunk))
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "receiver gone"))
    }

    /// Send what is buffered; the stream ends when the writer is dropped.
    pub fn finish(mut self) {
        let _ = self.send();
    }
}

impl Write for ChannelWriter {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= CHUNK {
            self.send()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.send()
    }
}

/// A blocking reader fed by an async producer through a bounded channel.
pub struct ChannelReader {
    rx: mpsc::Receiver<std::io::Result<Bytes>>,
    current: Bytes,
}

impl ChannelReader {
    pub fn pair(depth: usize) -> (mpsc::Sender<std::io::Result<Bytes>>, ChannelReader) {
        let (tx, rx) = mpsc::channel(depth);
        (
            tx,
            ChannelReader {
                rx,
                current: Bytes::new(),
            },
        )
    }
}

impl Read for ChannelReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while self.current.is_empty() {
            match self.rx.blocking_recv() {
                Some(Ok(b)) => self.current = b,
                Some(Err(e)) => return Err(e),
                None => return Ok(0),
            }
        }
        let n = out.len().min(self.current.len());
        out[..n].copy_from_slice(&self.current.split_to(n));
        Ok(n)
    }
}
