# Smoke model image: builds with no image registry and no GPU, in seconds.
# tools/setup.sh copies Debian's static busybox (package busybox-static) into docker/smoke/.
# No CONTEXT line: this image fits every context.
FROM scratch
COPY smoke/busybox /bin/busybox
RUN ["/bin/busybox", "--install", "-s", "/bin"]
# The runner starts shell scripts with bash; busybox's ash stands in for it here.
RUN printf '#!/bin/sh\nexec /bin/sh "$@"\n' > /bin/bash && chmod 755 /bin/bash && mkdir -p /tmp /myworkspace
