/*
 * The process's signals (rm/util.h): SIGINT, SIGTERM and SIGHUP recorded once for every wait
 * to see (rm_interrupt_pending through rm_signal_cancelled), SIGPIPE ignored.
 */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "rm/util.h"

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	if (got_signal)
		_exit(128 + sig); /* the second Ctrl-C: leave at once */
	got_signal = sig;
}

/* SLURM repeats SIGTERM (scancel, then --kill-on-bad-exit when a rank exits) and its
 * SIGKILL after KillWait is the hard stop, so later signals must not cut the clean-up. */
static void on_signal_patient(int sig)
{
	if (!got_signal)
		got_signal = sig;
}

void rm_signals_install(int patient)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = patient ? on_signal_patient : on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* A closed terminal or a lost SSH session: stop as for SIGTERM, and keep the rows. */
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int rm_signal_received(void)
{
	return got_signal;
}

const char *rm_signal_name(void)
{
	return got_signal == SIGTERM ? "SIGTERM" : got_signal == SIGHUP ? "SIGHUP" : "SIGINT";
}

int rm_signal_cancelled(void *ud)
{
	(void)ud;
	return got_signal != 0;
}
