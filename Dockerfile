# The image a suite's Kubernetes Job runs (kasmrt suite --emit k8s): Debian
# with the packages scripts/setup.sh installs, the kasmrt binary, and the
# scenarios under /src, the Job's working directory.
#   docker build -t registry.example/kasmrt:$(git describe --always) .
FROM golang:1.26-bookworm AS build
WORKDIR /build
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-X main.version=${VERSION}" -o /out/kasmrt ./cmd/kasmrt
# The long-lived tesseract (drivers/ocr) links Debian's libtesseract.
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends libtesseract-dev >/dev/null \
  && CGO_ENABLED=1 go build -trimpath -o /out/kasmrt-ocr ./cmd/kasmrt-ocr

FROM debian:bookworm-slim
# setup.sh is the one package list: the runtime's (x11vnc and noVNC for the
# takeover, sway, grim, wtype and qtwayland5 for the Wayland desktop…) and
# the example scenarios' applications. suite/image_test.go fails when this
# stage stops installing one of them.
COPY scripts/setup.sh /tmp/setup.sh
RUN bash /tmp/setup.sh && rm -rf /var/lib/apt/lists/* /tmp/setup.sh
# The Job runs as this user (runAsNonRoot); its reports volume is group-
# writable through the pod's fsGroup.
RUN useradd --uid 10001 --create-home kasmrt
COPY --from=build /out/kasmrt /out/kasmrt-ocr /usr/local/bin/
COPY --chown=10001:10001 scenarios /src/scenarios
WORKDIR /src
USER 10001
ENTRYPOINT ["kasmrt"]
