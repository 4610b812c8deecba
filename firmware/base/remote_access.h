// The base firmware's remote-access service (protocol/erisc_remote_access.h): commands the host
// queues in this core's L1 are done on this chip or carried over the link to the peer's base
// firmware; commands the peer sends are done here and answered. Each call does a bounded amount
// of work and returns: the base firmware calls it every heartbeat period, and an application
// calls it through the context switch.
#pragma once

// Once at boot: empty queues, nothing pending.
void remote_access_init();
// Whether a call to remote_access_service() has something to do now (the idle loop wakes on it).
bool remote_access_has_work();
// Serve what is waiting: the peer's command (if any), then the host's queue.
void remote_access_service();
// Before an application takes the core: serve until nothing is pending and no command came for a
// while (bounded), so no host command is left stranded behind the application.
void remote_access_finish();
