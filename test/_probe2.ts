import { testApp } from 'rankd/testing';
import template from '../template/pipelines/main.js';
const shop = await testApp(template, { sampleData: new URL('../template/', import.meta.url) });
const doc = (await shop.server.inject({ url: '/openapi.json' })).json();
for (const k of ['RankingOverrides','EntityGetRequest','Query','User','Product']) console.log(k, JSON.stringify(doc.components.schemas[k]));
console.log(JSON.stringify(doc.paths['/api/v1/ranking'].post.responses['200']).slice(0,300));
console.log([...template.featureViews.values()].map((v) => [v.name, v.entityTypes.map((e) => e.name)]));
const m = await shop.server.inject({ url: '/metrics' }); console.log(m.body.split('\n').filter((l) => l.includes('stage_duration') || l.includes('http_requests_total')).slice(0, 30).join('\n'));
await shop.close();
