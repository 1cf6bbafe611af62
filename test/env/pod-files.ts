/**
 * What the local pod runner (pod-runner.ts) prepares before it starts a worker process, like a
 * kubelet mounting volumes and resolving env: ConfigMap, Secret and projected (Secret) volumes
 * written under the pod's directory (a subPath mount as the one file),
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
  /** [container mount path, local directory or file] of every rendered volume mount. */
  mounts: Array<[string, string]>;
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
    const files = volume && (await volumeFiles(core, ns, volume));
    if (!files) continue;
    const target = path.join(podDir, mount.mountPath);
    if (mount.subPath) {
      // One file of the volume at the mount path itself.
      if (files[mount.subPath] === undefined) continue;
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(target, files[mount.subPath]);
    } else {
      fs.mkdirSync(target, { recursive: true });
      for (const [file, content] of Object.entries(files)) fs.writeFileSync(path.join(target, file), content);
    }
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
  return { env, args, messageFile, mounts };
}

type Volume = NonNullable<V1PodSpec['volumes']>[number];
type KeyItems = Array<{ key: string; path: string }> | undefined;

/** Picks `items` (key -> file name) from `data`, or every key when there are none. */
function pick(data: Record<string, string>, items: KeyItems): Record<string, string> {
  if (!items) return data;
  const out: Record<string, string> = {};
  for (const it of items) if (data[it.key] !== undefined) out[it.path] = data[it.key];
  return out;
}

async function secretData(core: CoreV1Api, ns: string, name: string): Promise<Record<string, string>> {
  const secret = await core.readNamespacedSecret({ name, namespace: ns });
  const out: Record<string, string> = {};
  for (const [k, b64] of Object.entries(secret.data ?? {}))
    out[k] = Buffer.from(b64, 'base64').toString('utf8');
  return out;
}

/** The files a ConfigMap, Secret or projected Secret volume holds (undefined for other volumes). */
async function volumeFiles(
  core: CoreV1Api,
  ns: string,
  v: Volume,
): Promise<Record<string, string> | undefined> {
  if (v.configMap) {
    const cm = await core.readNamespacedConfigMap({ name: v.configMap.name!, namespace: ns });
    return pick(cm.data ?? {}, v.configMap.items);
  }
  if (v.secret) return pick(await secretData(core, ns, v.secret.secretName!), v.secret.items);
  if (v.projected) {
    const files: Record<string, string> = {};
    for (const src of v.projected.sources ?? [])
      if (src.secret)
        Object.assign(files, pick(await secretData(core, ns, src.secret.name!), src.secret.items));
    return files;
  }
  return undefined;
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
export function localPath(value: string, mounts: ReadonlyArray<[string, string]>): string {
  for (const [mountPath, local] of mounts) {
    if (value === mountPath || value.startsWith(`${mountPath}/`))
      return local + value.slice(mountPath.length);
  }
  return value;
}
