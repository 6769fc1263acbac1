/* SPDX-License-Identifier: BSD-2-Clause */
/* The files of `fabscope capture`, and the user it captures as (capture-files.h). */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/error.h"
#include "capture-files.h"

/* the child's request: make file n ('O'), or remove it ('U') */
struct capreq {
	char op;
	int n;
};

int capfiles_open(struct capfiles *cf, const char *file, int ring)
{
	const char *slash = strrchr(file, '/');
	int rc;

	memset(cf, 0, sizeof(*cf));
	cf->sock = -1;
	cf->file = file;
	cf->base = slash ? slash + 1 : file;
	cf->ring = ring;
	cf->dir.fd = -1;
	if (!*cf->base)
		return fs_err_usage("-w '%s' names no file: give the file to write", file);
	if ((rc = outdir_of_file(&cf->dir, file, "the directory of -w")))
		return rc;
	return 0;
}

void capfiles_name(const struct capfiles *cf, int n, char *buf, size_t len)
{
	if (cf->ring)
		snprintf(buf, len, "%s.%d", cf->file, n);
	else
		snprintf(buf, len, "%s", cf->file);
}

/* where the files are made: file n, in place */
static int make_file(struct capfiles *cf, int n, int *fd)
{
	char name[4200];
	struct outfile of;
	int rc;

	if (n < 0 || (!cf->ring && n))
		return -FS_EXIT_ENV;
	if (cf->ring)
		snprintf(name, sizeof(name), "%s.%d", cf->base, n);
	else
		snprintf(name, sizeof(name), "%s", cf->base);
	if ((rc = outfile_create_in(&of, &cf->dir, name, 0644)))
		return rc;
	if ((rc = outfile_publish(&of, 1))) {
		outfile_abort(&of);
		return rc;
	}
	*fd = outfile_take_fd(&of);
	return 0;
}

static void remove_file(struct capfiles *cf, int n)
{
	char name[4200];

	if (!cf->ring || n < 0)
		return;
	snprintf(name, sizeof(name), "%s.%d", cf->base, n);
	if (unlinkat(cf->dir.fd, name, 0) && errno != ENOENT)
		fs_warn("cannot remove the oldest file of the ring '%s.%d': %s", cf->file, n, strerror(errno));
}

/* the reply: fd (>= 0, passed), or -1 (refused, said) */
static int send_reply(int sock, int fd)
{
	char ok = fd >= 0 ? 'y' : 'n', cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &ok, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (fd >= 0) {
		struct cmsghdr *c;

		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	while (sendmsg(sock, &mh, MSG_NOSIGNAL) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

/* the parent's answer: 0 and *fd, 1 refused (the parent said why), or -1 (no answer) */
static int recv_reply(int sock, int *fd)
{
	char ok = 0, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &ok, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	ssize_t n;

	while ((n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	if (n == 1 && ok == 'n')
		return 1;
	c = n == 1 ? CMSG_FIRSTHDR(&mh) : NULL;
	if (ok != 'y' || !c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
	    c->cmsg_len != CMSG_LEN(sizeof(int)))
		return -1;
	memcpy(fd, CMSG_DATA(c), sizeof(int));
	return 0;
}

int capfiles_new(struct capfiles *cf, int n, int *fd)
{
	struct capreq q = { 'O', n };
	int rc;

	if (cf->sock < 0)
		return make_file(cf, n, fd);
	rc = send(cf->sock, &q, sizeof(q), MSG_NOSIGNAL) != (ssize_t)sizeof(q) ? -1 : recv_reply(cf->sock, fd);
	if (rc > 0)
		return -FS_EXIT_ENV;	/* (said by the parent) */
	if (rc) {
		char name[4200];

		capfiles_name(cf, n, name, sizeof(name));
		return fs_err_env("cannot write '%s': the process that makes the capture's files is gone", name);
	}
	return 0;
}

void capfiles_remove(struct capfiles *cf, int n)
{
	struct capreq q = { 'U', n };

	if (cf->sock < 0)
		remove_file(cf, n);
	else if (send(cf->sock, &q, sizeof(q), MSG_NOSIGNAL) != (ssize_t)sizeof(q))
		fs_warn("cannot remove the oldest file of the ring '%s.%d': the process that makes the capture's "
			"files is gone", cf->file, n);
}

void capfiles_close(struct capfiles *cf)
{
	if (cf->sock >= 0)
		close(cf->sock);
	cf->sock = -1;
	outdir_close(&cf->dir);
}

int capfiles_user(const char *user, uid_t *uid, gid_t *gid, int *drop)
{
	struct passwd *pw;

	*drop = 0;
	*uid = geteuid();
	*gid = getegid();
	if (!user) {
		if (geteuid())
			return 0;	/* (no root to give up) */
		user = "nobody";
	}
	errno = 0;
	if (!(pw = getpwnam(user)))
		return fs_err(errno ? FS_EXIT_ENV : FS_EXIT_USAGE, "-Z %s: no such user%s%s", user,
			      errno ? ": " : "", errno ? strerror(errno) :
			      "; give an unprivileged user to capture as (-Z USER), or -Z root to keep root");
	if (pw->pw_uid == geteuid())
		return 0;
	if (geteuid())
		return fs_err_usage("-Z %s: only root can capture as another user (this is uid %u)", user,
				    (unsigned)geteuid());
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	*drop = pw->pw_uid != 0;
	return 0;
}

int capfiles_drop(uid_t uid, gid_t gid)
{
	uid_t r, e, s;

	if (setgroups(1, &gid) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid))
		return fs_err_env("cannot switch to uid %u: %s", (unsigned)uid, strerror(errno));
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return fs_err_env("cannot set no_new_privs: %s", strerror(errno));
	if (getresuid(&r, &e, &s) || r != uid || e != uid || s != uid || !setuid(0))
		return fs_err_env("switched to uid %u, but root could still come back: not capturing", (unsigned)uid);
	return 0;
}

static volatile pid_t forward_to;

static void forward(int sig)
{
	if (forward_to > 0)
		kill(forward_to, sig);
}

/* the parent: make what the child asks for until it ends; its exit status */
static int serve(struct capfiles *cf, pid_t child)
{
	struct sigaction sa = { .sa_handler = forward };
	int st = 0, sigs[] = { SIGINT, SIGTERM, SIGHUP }, i;
	struct capreq q;
	ssize_t n;

	forward_to = child;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < 3; i++)	/* (no SA_RESTART: recv returns, the loop goes on) */
		sigaction(sigs[i], &sa, NULL);
	for (;;) {
		int fd = -1;

		n = recv(cf->sock, &q, sizeof(q), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(q))	/* the child is done */
			break;
		if (q.op == 'O') {
			if (make_file(cf, q.n, &fd))
				fd = -1;
			send_reply(cf->sock, fd);
			if (fd >= 0)
				close(fd);
		} else if (q.op == 'U') {
			remove_file(cf, q.n);
		}
	}
	while (waitpid(child, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int capfiles_split(struct capfiles *cf, int *status)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return fs_err_env("cannot make the capture's file channel: %s", strerror(errno));
	fflush(NULL);
	if ((pid = fork()) < 0) {
		close(sv[0]);
		close(sv[1]);
		return fs_err_env("cannot fork: %s", strerror(errno));
	}
	if (pid) {
		close(sv[1]);
		cf->sock = sv[0];
		*status = serve(cf, pid);
		return 1;
	}
	close(sv[0]);
	outdir_close(&cf->dir);	/* (the parent's to use) */
	cf->sock = sv[1];
	return 0;
}
