# Sourced by scripts/setup.sh and scripts/with-node: the project's Node, pinned in .node-version
# (the major the images run). LP_NODE_DIR is its copy in the cache, used when the machine's Node
# is another major. Expects $root (the repository root).
LP_NODE_VERSION=$(tr -d '[:space:]v' < "$root/.node-version")
LP_NODE_DIR="${LOGPIPELINE_CACHE:-$HOME/.cache/logpipeline}/node-$LP_NODE_VERSION"

# True when the node on PATH is not the pinned major (or there is none).
lp_node_needs_cache() {
  local have
  have=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  [ "$have" != "${LP_NODE_VERSION%%.*}" ]
}
