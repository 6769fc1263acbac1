/* SPDX-License-Identifier: BSD-2-Clause */
/* placeholder until the unit helpers are written */
int main(void) { return 0; }
