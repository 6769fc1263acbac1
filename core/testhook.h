/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef FS_TESTHOOK_H
#define FS_TESTHOOK_H

#include <stdlib.h>

/*
 * Test hooks: environment variables through which the tests steer a path
 * that is hard to reach otherwise (another protocol version, a server that
 * holds after "ready", a busy server's grace).  Only a test build reads them
 * (make TEST_HOOKS=yes, what the test targets build; `fabscope version` then
 * says "test hooks"); the binary of make, make install and the package never
 * looks at them.
 */
#ifdef FABSCOPE_TEST_HOOKS
static inline const char *fs_test_env(const char *name)
{
	return getenv(name);
}
#define FS_TEST_HOOKS 1
#else
static inline const char *fs_test_env(const char *name)
{
	(void)name;
	return NULL;
}
#define FS_TEST_HOOKS 0
#endif

#endif
