/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef FS_VERSION_H
#define FS_VERSION_H

#ifndef FABSCOPE_VERSION
#define FABSCOPE_VERSION "0.1.0"
#endif

#endif
