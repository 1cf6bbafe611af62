/**
 * What the local pod runner (pod-runner.ts) prepares before it starts a worker process, like a
 * kubelet mounting volumes and resolving env: ConfigMap volumes written under the pod's directory,
 * env values, field refs and secretKeyRefs resolved from the apiserver, container paths mapped to
 * the local copies, and the termination-message file the worker writes when it exits on an error.
 */
import type { CoreV1Api, V1Container, V1EnvVar, V1PodSpec } from '@kubernetes/client-node';
import fs from 'node:fs';
import path from 'node:path';

/** The process-side view of a pod's container. */
export interface PodFiles {
  env: Record<string, string>;
  args: string[];
  /** Local stand-in for the container's terminationMessagePath. */
  messageFile: string;
}

/** Renders the pod's mounted files under `podDir` and resolves its env and args. */
export async function renderPodFiles(
  core: CoreV1Api,
  ns: string,
  container: V1Container,
  podSpec: V1PodSpec,
  podDir: string,
  podName: string,
): Promise<PodFiles> {
  const env: Record<string, string> = {};
  const mounts: Array<[string, string]> = [];
  for (const mount of container.volumeMounts ?? []) {
    const volume = podSpec.volumes?.find((v) => v.name === mount.name);
    if (!volume?.configMap) continue;
    const cm = await core.readNamespacedConfigMap({ name: volume.configMap.name!, namespace: ns });
    const target = path.join(podDir, mount.mountPath);
    fs.mkdirSync(target, { recursive: true });
    for (const [file, content] of Object.entries(cm.data ?? {}))
      fs.writeFileSync(path.join(target, file), content);
    mounts.push([mount.mountPath, target]);
  }
  for (const e of container.env ?? [])
    env[e.name] = localPath(await resolveEnv(core, ns, e, podName), mounts);
  const configFile = mounts.map(([, t]) => path.join(t, 'config.json')).find((f) => fs.existsSync(f));
  // The container sees its files under the mount paths; here they live in the pod's directory.
  if (configFile && (env.LP_CONFIG === undefined || !fs.existsSync(env.LP_CONFIG)))
    env.LP_CONFIG = configFile;
  const messageFile = path.join(podDir, 'termination-log');
  env.LP_TERMINATION_MESSAGE_PATH = messageFile;
  const args = (container.args ?? []).map((a) => localPath(a, mounts));
  return { env, args, messageFile };
}

async function resolveEnv(core: CoreV1Api, ns: string, e: V1EnvVar, podName: string): Promise<string> {
  if (e.value !== undefined) return e.value;
  const field = e.valueFrom?.fieldRef?.fieldPath;
  if (field === 'metadata.name') return podName;
  if (field === 'metadata.namespace') return ns;
  const ref = e.valueFrom?.secretKeyRef;
  if (ref) {
    const secret = await core.readNamespacedSecret({ name: ref.name!, namespace: ns });
    const b64 = secret.data?.[ref.key];
    return b64 ? Buffer.from(b64, 'base64').toString('utf8') : '';
  }
  return '';
}

/** Maps a path inside the container (under a mount path) to where the runner put the files. */
function localPath(value: string, mounts: ReadonlyArray<[string, string]>): string {
  for (const [mountPath, local] of mounts) {
    if (value === mountPath || value.startsWith(`${mountPath}/`))
      return local + value.slice(mountPath.length);
  }
  return value;
}
