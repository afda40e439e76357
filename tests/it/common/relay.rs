//! A TCP relay in front of a fixture, for a bridge that outlives its connections: it
//! forwards each connection to the target of the moment, and makes the open ones die the way
//! a laptop's sleep does (silently: the connection stays open, and the next bytes either side
//! sends on it get a reset, as from a peer or a NAT that forgot it) or the way a restart of
//! the server does (closed, and the port refusing connections for a while).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// How long the relay tries to listen on its port again after a restart's pause.
const REBIND_TIMEOUT: Duration = Duration::from_secs(10);
/// The read buffer of each direction of a connection, in bytes.
const BUFFER_BYTES: usize = 16 * 1024;

/// How the connections open at a change die.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Death {
    /// Silently: no FIN; the next bytes from either side get a reset.
    Sleep,
    /// Closed at once (FIN both ways), as when the server's process exits.
    Restart,
}

/// One change: the connections accepted before it (`n`) die `death`; later ones go to
/// `target`; after a restart the port refuses connections for `down`.
#[derive(Clone, Copy)]
struct Epoch {
    n: u64,
    death: Death,
    target: SocketAddr,
    down: Duration,
}

pub struct Relay {
    pub addr: SocketAddr,
    ctl: watch::Sender<Epoch>,
    resets: Arc<AtomicUsize>,
    accepted: Arc<AtomicUsize>,
}

impl Relay {
    /// A relay on a loopback port of its own to `target`.
    pub fn start(target: SocketAddr) -> Relay {
        let (ctl, rx) = watch::channel(Epoch {
            n: 0,
            death: Death::Sleep,
            target,
            down: Duration::ZERO,
        });
        let resets = Arc::new(AtomicUsize::new(0));
        let accepted = Arc::new(AtomicUsize::new(0));
        let (tx, addr_rx) = std::sync::mpsc::channel();
        let (r, a) = (resets.clone(), accepted.clone());
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
                let addr = listener.local_addr().expect("addr");
                tx.send(addr).expect("send");
                accept(listener, addr, rx, r, a).await;
            });
        });
        let addr = addr_rx.recv_timeout(super::RECV_TIMEOUT).expect("relay up");
        Relay {
            addr,
            ctl,
            resets,
            accepted,
        }
    }

    /// `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// The laptop sleeps: every open connection is dead from now on without a sign (no
    /// FIN); the next bytes either side sends on one are answered with a reset to the client.
    /// New connections go to the same target.
    pub fn sleep(&self) {
        self.ctl.send_modify(|e| {
            e.n += 1;
            e.death = Death::Sleep;
            e.down = Duration::ZERO;
        });
    }

    /// The server restarts: every open connection is closed, the port refuses connections
    /// for `down`, then new connections go to `target` (the restarted server).
    pub fn restart(&self, target: SocketAddr, down: Duration) {
        self.ctl.send_modify(|e| {
            e.n += 1;
            e.death = Death::Restart;
            e.target = target;
            e.down = down;
        });
    }

    /// The connections reset so far (dead ones that bytes arrived on).
    pub fn resets(&self) -> usize {
        self.resets.load(Ordering::SeqCst)
    }

    /// The connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

async fn accept(
    mut listener: TcpListener,
    addr: SocketAddr,
    mut ctl: watch::Receiver<Epoch>,
    resets: Arc<AtomicUsize>,
    accepted: Arc<AtomicUsize>,
) {
    loop {
        tokio::select! {
            conn = listener.accept() => {
                let Ok((client, _)) = conn else { continue };
                accepted.fetch_add(1, Ordering::SeqCst);
                let born = *ctl.borrow();
                tokio::spawn(pipe(client, born, ctl.clone(), resets.clone()));
            }
            changed = ctl.changed() => {
                if changed.is_err() {
                    return;
                }
                let e = *ctl.borrow_and_update();
                if e.death == Death::Restart && !e.down.is_zero() {
                    drop(listener);
                    tokio::time::sleep(e.down).await;
                    listener = rebind(addr).await;
                }
            }
        }
    }
}

/// Listens on `addr` again (the port a restarted server takes back).
async fn rebind(addr: SocketAddr) -> TcpListener {
    let end = tokio::time::Instant::now() + REBIND_TIMEOUT;
    loop {
        match TcpListener::bind(addr).await {
            Ok(l) => return l,
            Err(e) if tokio::time::Instant::now() > end => panic!("the relay's port: {e}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
}

/// Forwards one connection until either side closes it or a change kills it.
async fn pipe(
    mut client: TcpStream,
    born: Epoch,
    mut ctl: watch::Receiver<Epoch>,
    resets: Arc<AtomicUsize>,
) {
    let Ok(mut server) = TcpStream::connect(born.target).await else {
        return;
    };
    let (mut up, mut down) = (vec![0u8; BUFFER_BYTES], vec![0u8; BUFFER_BYTES]);
    let death = loop {
        // The change first: once the laptop sleeps, bytes that arrive in the same wake-up
        // must not reach the server (a dead connection delivers nothing).
        tokio::select! {
            biased;
            changed = ctl.changed() => {
                if changed.is_err() {
                    return;
                }
                let e = *ctl.borrow_and_update();
                if e.n > born.n {
                    break e.death;
                }
            }
            r = client.read(&mut up) => match r {
                Ok(0) | Err(_) => return,
                Ok(n) => if server.write_all(&up[..n]).await.is_err() { return },
            },
            r = server.read(&mut down) => match r {
                Ok(0) | Err(_) => return,
                Ok(n) => if client.write_all(&down[..n]).await.is_err() { return },
            },
        }
    };
    if death == Death::Restart {
        return;
    }
    // Dead without a sign: nothing is forwarded any more; the first bytes from either side
    // (the client's next request, the server's next keep-alive) reset the client's side.
    let mut server_open = true;
    loop {
        tokio::select! {
            r = client.read(&mut up) => match r {
                Ok(0) | Err(_) => return,
                Ok(_) => break,
            },
            r = server.read(&mut down), if server_open => match r {
                Ok(0) | Err(_) => server_open = false,
                Ok(_) => break,
            },
        }
    }
    let _ = client.set_zero_linger();
    drop(client);
    resets.fetch_add(1, Ordering::SeqCst);
}
