//! Non-blocking stdin/stdout.
//!
//! `tokio::io::stdin()` runs every read on a blocking thread, which roughly doubles a round
//! trip. When fd 0 / fd 1 are pipes or sockets we register them with the reactor instead
//! (`O_NONBLOCK` + `AsyncFd`); anything else (a file, a terminal) falls back to tokio's std
//! handles.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

pub type BoxRead = Box<dyn AsyncRead + Send + Unpin>;
pub type BoxWrite = Box<dyn AsyncWrite + Send + Unpin>;

pub fn stdin() -> BoxRead {
    #[cfg(unix)]
    if let Some(pipe) = unix::Pipe::new(0) {
        return Box::new(pipe);
    }
    Box::new(tokio::io::stdin())
}

/// Stdout, and its fd when it is a non-blocking pipe (which may then also be written directly
/// with non-blocking `write(2)` calls, never blocking a thread).
pub fn stdout() -> (BoxWrite, Option<i32>) {
    #[cfg(unix)]
    if let Some(pipe) = unix::Pipe::new(1) {
        return (Box::new(pipe), Some(1));
    }
    (Box::new(tokio::io::stdout()), None)
}

#[cfg(unix)]
mod unix {
    use super::*;
    use std::os::fd::{AsRawFd, RawFd};
    use tokio::io::unix::AsyncFd;

    /// Borrows an fd the process owns for its whole life; never closes it.
    pub struct Fd(RawFd);
    impl AsRawFd for Fd {
        fn as_raw_fd(&self) -> RawFd {
            self.0
        }
    }

    pub struct Pipe(AsyncFd<Fd>);

    impl Pipe {
        pub fn new(fd: RawFd) -> Option<Pipe> {
            // SAFETY: fstat/fcntl on a descriptor number only read or set its flags.
            unsafe {
                let mut st: libc::stat = std::mem::zeroed();
                if libc::fstat(fd, &mut st) != 0 {
                    return None;
                }
                let kind = st.st_mode & libc::S_IFMT;
                if kind != libc::S_IFIFO && kind != libc::S_IFSOCK {
                    return None;
                }
                let flags = libc::fcntl(fd, libc::F_GETFL);
                if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
                    return None;
                }
            }
            // SAFETY: fd 0 and fd 1 stay open for the life of the process, and nothing else
            // registers them with the reactor.
            unsafe { AsyncFd::register(Fd(fd)) }.ok().map(Pipe)
        }
    }

    fn cvt(n: isize) -> io::Result<usize> {
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }

    impl AsyncRead for Pipe {
        fn poll_read(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            loop {
                let mut guard = ready!(self.0.poll_read_ready(cx))?;
                let unfilled = buf.initialize_unfilled();
                let res = guard.try_io(|fd| {
                    // SAFETY: the slice is valid for writes of its length.
                    cvt(unsafe {
                        libc::read(fd.as_raw_fd(), unfilled.as_mut_ptr().cast(), unfilled.len())
                    })
                });
                match res {
                    Ok(Ok(n)) => {
                        buf.advance(n);
                        return Poll::Ready(Ok(()));
                    }
                    Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Ok(Err(e)) => return Poll::Ready(Err(e)),
                    Err(_would_block) => continue,
                }
            }
        }
    }

    impl AsyncWrite for Pipe {
        fn poll_write(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            data: &[u8],
        ) -> Poll<io::Result<usize>> {
            loop {
                let mut guard = ready!(self.0.poll_write_ready(cx))?;
                let res = guard.try_io(|fd| {
                    // SAFETY: the slice is valid for reads of its length.
                    cvt(unsafe { libc::write(fd.as_raw_fd(), data.as_ptr().cast(), data.len()) })
                });
                match res {
                    Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Ok(r) => return Poll::Ready(r),
                    Err(_would_block) => continue,
                }
            }
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }
}
