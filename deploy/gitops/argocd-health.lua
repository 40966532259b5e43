-- Argo CD health check of autoscaling.signalr.dev/CapacityPolicy, for argocd-cm's
-- resource.customizations.health.autoscaling.signalr.dev_CapacityPolicy (docs/install.md).
-- It reads what the operator writes to status: observedGeneration and the conditions
-- (docs/capacitypolicy.md). Argo CD runs it without the string library, so it uses none.
--
--   Progressing  no status yet; a generation the operator has not yet observed; an ARM update in
--                flight (status.operation); Ready Unknown, or False while the instance's capacity is
--                not known yet (InstanceUnavailable) or Azure throttles for a known time (Throttled)
--   Degraded     Ready False for InvalidSpec, OutOfScope, UnsupportedSku, Conflict, Fallback,
--                UpdateNotApplied, UpdateFailed, UpdateRefused, ProgressDeadlineExceeded,
--                InstanceNotFound, AuthorizationFailed or InvalidRequest (the operator's
--                Stalled=True); or the Conflict or Fallback condition True
--   Suspended    Ready True with reason Paused (mode Paused or the paused annotation)
--   Healthy      Ready True for the current generation
local hs = {}

local function condition(conditions, ctype)
  if conditions == nil then
    return nil
  end
  for _, c in ipairs(conditions) do
    if c.type == ctype then
      return c
    end
  end
  return nil
end

local function describe(c)
  local text = c.type .. "=" .. c.status
  if c.reason ~= nil then
    text = text .. " (" .. c.reason .. ")"
  end
  if c.message ~= nil and c.message ~= "" then
    text = text .. ": " .. c.message
  end
  return text
end

local degradedReasons = {
  InvalidSpec = true,
  OutOfScope = true,
  UnsupportedSku = true,
  Conflict = true,
  Fallback = true,
  UpdateNotApplied = true,
  UpdateFailed = true,
  UpdateRefused = true,
  ProgressDeadlineExceeded = true,
  InstanceNotFound = true,
  AuthorizationFailed = true,
  InvalidRequest = true,
}

local status = obj.status
if status == nil or status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to reconcile the policy"
  return hs
end

local generation = obj.metadata.generation
local observed = status.observedGeneration
if generation ~= nil and (observed == nil or observed < generation) then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to observe generation " .. generation
  return hs
end

local ready = condition(status.conditions, "Ready")
if ready == nil or (generation ~= nil and ready.observedGeneration ~= nil and ready.observedGeneration < generation) then
  hs.status = "Progressing"
  hs.message = "Waiting for the Ready condition of generation " .. (generation or "?")
  return hs
end

if ready.status == "False" and degradedReasons[ready.reason] then
  hs.status = "Degraded"
  hs.message = describe(ready)
  return hs
end
for _, ctype in ipairs({ "Conflict", "Fallback" }) do
  local c = condition(status.conditions, ctype)
  if c ~= nil and c.status == "True" then
    hs.status = "Degraded"
    hs.message = describe(c)
    return hs
  end
end

if status.operation ~= nil then
  local to = status.operation.to or {}
  hs.status = "Progressing"
  hs.message = "Scaling to " .. (to.units or "?") .. " units of " .. (to.sku or "?") ..
    " since " .. (status.operation.startedAt or "?")
  return hs
end

if ready.status ~= "True" then
  hs.status = "Progressing"
  hs.message = describe(ready)
  return hs
end

if ready.reason == "Paused" then
  hs.status = "Suspended"
else
  hs.status = "Healthy"
end
local current = status.current
if current ~= nil then
  hs.message = (current.units or "?") .. " units of " .. (current.sku or "?") .. "; " .. describe(ready)
else
  hs.message = describe(ready)
end
return hs
