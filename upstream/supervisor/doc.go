// Package supervisor is the process that starts and watches mcpx's stdio
// upstreams on Unix, and the protocol mcpx speaks with it.
//
// One supervisor serves all the stdio upstreams of an mcpx process. mcpx
// starts it by running its own executable with [Env]=1 and one end of a
// socket pair as file descriptor 3. It starts each command as the leader
// of a new process group, with the stdin, stdout and stderr mcpx sends
// along (SCM_RIGHTS), answers with the pid, reports the exit status, and
// signals a command's group and the rest of its tree when mcpx asks. As a
// child subreaper (Linux) it adopts the orphans of each tree. When mcpx
// disappears without cleaning up (SIGKILL, a crash), its end of the socket
// closes; the supervisor then terminates every tree and exits. That is why
// it exists: a direct child could learn of mcpx's death through Pdeathsig,
// but the grandchildren behind `sh -c` or `npx`, and those that called
// setsid, could not.
//
// The supervisor takes over the process in the initialisation of package
// [github.com/mcpx/mcpx/upstream/supervisor/takeover], which mcpx's main
// imports for that effect, right after this package's and before the other
// packages of the binary initialise: the whole mcpx binary's package
// initialisation touches about 14 MiB; stopping there, after the few
// packages this one needs, leaves about 7 MiB. That is why this package
// imports so little (not even strings or encoding/json): each import that
// sorts late makes the packages initialised before it many more.
package supervisor
