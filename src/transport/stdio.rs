//! Non-blocking stdin/stdout.
//!
//! `tokio::io::stdin()` runs every read on a blocking thread, which roughly doubles a round
//! trip. When fd 0 / fd 1 are pipes or sockets we register them with the reactor instead
//! (`O_NONBLOCK` + `AsyncFd`); anything else (a file, a terminal) falls back to tokio's std
//! handles.
//!
//! A host talks in bursts (a plan, then a call, then the next turn's plan): right after a
//! message, the pipe reader keeps trying `read(2)` for up to `SPIN` before it parks in the
//! reactor, so the next request of a burst is read without a wake-up from sleep (on a VM that
//! wake-up alone can cost more than the whole request). It spins only while the host is
//! talking (a message read within `BURST`), so an idle sidecar costs nothing; at most `SPIN` of
//! one core per message. `TOOLREG_PIPE_SPIN_US` sets it (`0`: park at once, for a host that
//! counts every cycle, such as one on battery).

use tokio::io::{AsyncRead, AsyncWrite};

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
    use std::io;
    use std::pin::Pin;
    use std::task::{ready, Context, Poll};
    use tokio::io::ReadBuf;
    use std::os::fd::{AsRawFd, RawFd};
    use std::time::{Duration, Instant};
    use tokio::io::unix::AsyncFd;

    /// Borrows an fd the process owns for its whole life; never closes it.
    pub struct Fd(RawFd);
    impl AsRawFd for Fd {
        fn as_raw_fd(&self) -> RawFd {
            self.0
        }
    }

    /// How long the reader keeps trying before it parks, and within how long of the last
    /// message it does so.
    const SPIN: Duration = Duration::from_micros(50);
    const BURST: Duration = Duration::from_millis(20);
    const MAX_SPIN: Duration = Duration::from_millis(1);
    static SPIN_LIMIT: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();

    pub struct Pipe {
        fd: AsyncFd<Fd>,
        /// When the last read returned data (reads only).
        last_data: Option<Instant>,
    }

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
            unsafe { AsyncFd::register(Fd(fd)) }.ok().map(|fd| Pipe { fd, last_data: None })
        }

        /// One non-blocking `read(2)` into `buf`, outside the reactor's readiness.
        fn read_now(&self, buf: &mut ReadBuf<'_>) -> io::Result<usize> {
            let unfilled = buf.initialize_unfilled();
            // SAFETY: the slice is valid for writes of its length.
            let n = cvt(unsafe { libc::read(self.fd.as_raw_fd(), unfilled.as_mut_ptr().cast(), unfilled.len()) })?;
            buf.advance(n);
            Ok(n)
        }

        /// While the host is talking, try for up to `SPIN` before parking: `Some` when a read
        /// answered (data, end of file or an error other than "would block").
        fn spin(&mut self, buf: &mut ReadBuf<'_>) -> Option<io::Result<()>> {
            let now = Instant::now();
            let spin_limit = *SPIN_LIMIT.get_or_init(|| {
                let set = std::env::var("TOOLREG_PIPE_SPIN_US").ok().and_then(|v| v.parse().ok());
                set.map(Duration::from_micros).unwrap_or(SPIN).min(MAX_SPIN)
            });
            if !self.last_data.is_some_and(|t| now.duration_since(t) < BURST) || spin_limit.is_zero() {
                return None;
            }
            loop {
                match self.read_now(buf) {
                    Ok(n) => {
                        if n > 0 {
                            self.last_data = Some(Instant::now());
                        }
                        return Some(Ok(()));
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Some(Err(e)),
                }
                if now.elapsed() >= spin_limit {
                    // Parked from now on, until the host talks again.
                    self.last_data = None;
                    return None;
                }
                std::hint::spin_loop();
            }
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
            let this = self.get_mut();
            if let Some(done) = this.spin(buf) {
                return Poll::Ready(done);
            }
            loop {
                let mut guard = ready!(this.fd.poll_read_ready(cx))?;
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
                        if n > 0 {
                            this.last_data = Some(Instant::now());
                        }
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
                let mut guard = ready!(self.fd.poll_write_ready(cx))?;
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
