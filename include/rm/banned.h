/*
 * Unsafe calls banned at compile time (git's banned.h). Include last, after system headers.
 */
#ifndef RM_BANNED_H
#define RM_BANNED_H

#define RM_BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(x, y) RM_BANNED(strcpy)
#undef strcat
#define strcat(x, y) RM_BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) RM_BANNED(strncpy)
#undef sprintf
#define sprintf(...) RM_BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) RM_BANNED(vsprintf)
#undef strtok
#define strtok(x, y) RM_BANNED(strtok)
#undef atoi
#define atoi(x) RM_BANNED(atoi)
#undef atol
#define atol(x) RM_BANNED(atol)
#undef gets
#define gets(x) RM_BANNED(gets)

#endif
